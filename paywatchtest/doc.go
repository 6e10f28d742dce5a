// Package paywatchtest runs a real paywatch for tests: a fresh PostgreSQL
// database with migrations, the daemon built by daemon.New as serve builds
// it (static rates, the sandbox's public keys, a settable clock), its HTTP
// API on an httptest server checked against the OpenAPI document, API keys
// per scope, and a scripted chain (chainstest.Fake) with its scanner per
// network, stepped by the test. Nothing is mocked but the chain.
package paywatchtest
