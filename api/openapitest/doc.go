// Package openapitest checks HTTP answers against the API's OpenAPI document
// (api/openapi.yaml) for tests: Handler wraps a server's handler and
// Transport a client's round tripper, and either fails the test on an answer
// the document does not describe: a status it does not list, a content type
// it does not name, a body that does not match its schema, a required header
// missing, or a body where it describes none. A path that matches no route
// must be answered 404 not_found with the error body.
//
// It is test support: no binary links it.
package openapitest
