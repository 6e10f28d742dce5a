package openapitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/paywatch/paywatch/api"
)

// Doc is the loaded and validated OpenAPI document with a router over its
// paths.
type Doc struct {
	T      *openapi3.T
	router routers.Router
}

// Load parses the document the API serves and validates it as OpenAPI 3.1.
func Load() (*Doc, error) {
	raw, err := api.OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if !t.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("the OpenAPI document is version %s, not 3.1", t.OpenAPI)
	}
	if err := t.Validate(loader.Context, openapi3.IsOpenAPI31OrLater()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	// Route by path alone: tests answer on any host and port.
	t.Servers = nil
	router, err := gorillamux.NewRouter(t)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	return &Doc{T: t, router: router}, nil
}

// Shared returns the document loaded once for the process.
var Shared = sync.OnceValues(Load)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// Check reports how the answer (status, header, body) to req differs from
// the document, or nil when the document describes it.
func (d *Doc) Check(req *http.Request, status int, header http.Header, body []byte) error {
	what := fmt.Sprintf("%s %s → %d %s", req.Method, req.URL.RequestURI(), status, header.Get("Content-Type"))
	// The router matches escaped paths ("/v1/accounts/%2F/balance") and dot
	// segments as parameters; the server routes the decoded, clean path.
	if p := req.URL.EscapedPath(); path.Clean(p) != p {
		return d.checkNoRoute(what, status, header, body)
	}
	route, params, err := d.router.FindRoute(req)
	if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
		return d.checkNoRoute(what, status, header, body)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	// ValidateResponse lets redirects through; the API documents none.
	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		return fmt.Errorf("%s: the document lists no %d answer for this operation", what, status)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s: %w\nbody: %.2000s", what, err, body)
	}
	// What ValidateResponse lets through: a body where the document has
	// none, and media types it does not decode.
	if len(ref.Value.Content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("%s: the document describes no body, got %.200q", what, body)
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		return fmt.Errorf("%s: content type: %w", what, err)
	}
	switch mt {
	case "image/png":
		if !bytes.HasPrefix(body, pngSignature) {
			return fmt.Errorf("%s: not a PNG: %.20q", what, body)
		}
	case "text/csv":
		if _, err := csv.NewReader(bytes.NewReader(body)).ReadAll(); err != nil {
			return fmt.Errorf("%s: not CSV: %w", what, err)
		}
	case "application/json":
		if !json.Valid(body) {
			return fmt.Errorf("%s: not JSON: %.200q", what, body)
		}
	}
	return nil
}

// checkNoRoute checks the answer to a request the document has no
// operation for: 404 with the error body.
func (d *Doc) checkNoRoute(what string, status int, header http.Header, body []byte) error {
	if status != http.StatusNotFound {
		return fmt.Errorf("%s: no operation in the document for this request, and the answer is not 404", what)
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("%s: a 404 must be application/json", what)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	schema := d.T.Components.Responses["NotFound"].Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse()); err != nil {
		return fmt.Errorf("%s: not the NotFound answer: %w", what, err)
	}
	return nil
}

// fail reports err on t, or loads the document and fails t when it cannot.
func doc(t testing.TB) *Doc {
	d, err := Shared()
	if err != nil {
		t.Errorf("openapi: %v", err)
	}
	return d
}

// Handler wraps h so that every answer it writes is checked against the
// document; a mismatch fails t. The answer still reaches the client as
// written.
func Handler(t testing.TB, h http.Handler) http.Handler {
	d := doc(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if d == nil || r.Context().Err() != nil && rec.status == 0 {
			return // the client went away before an answer
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if err := d.Check(r, rec.status, w.Header(), rec.body.Bytes()); err != nil {
			t.Errorf("openapi: %v", err)
		}
	})
}

// recorder passes an answer through and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Transport wraps rt (nil: http.DefaultTransport) so that every answer a
// client receives is checked against the document; a mismatch fails t. The
// body is read whole and handed on unchanged.
func Transport(t testing.TB, rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &transport{t: t, d: doc(t), rt: rt}
}

type transport struct {
	t  testing.TB
	d  *Doc
	rt http.RoundTripper
}

func (c *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil || c.d == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bufio.NewReader(bytes.NewReader(body)))
	if err := c.d.Check(req, resp.StatusCode, resp.Header, body); err != nil {
		c.t.Errorf("openapi: %v", err)
	}
	return resp, nil
}
