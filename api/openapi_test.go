package api_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/paywatchtest"
)

// The document loads and validates as OpenAPI 3.1, examples included.
func TestOpenAPIDocumentValidates(t *testing.T) {
	d, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	if d.T.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", d.T.OpenAPI)
	}
	for _, scope := range []string{api.ScopeStorefront, api.ScopeFinance, api.ScopeOperator} {
		s := d.T.Components.SecuritySchemes[scope]
		if s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
			t.Errorf("security scheme %q is not an HTTP bearer scheme: %+v", scope, s)
		}
	}
}

// The document's operations are exactly the routes the server mounts, each
// with the scope the route checks as its one security scheme (none for the
// public routes).
func TestOpenAPIRoutesMatchDocument(t *testing.T) {
	e := paywatchtest.New(t)
	s := api.New(api.Options{Service: e.Service, Reader: e.Store, Finance: e.Finance, Reports: e.Reports, Config: e.Config, Status: e.Nets, Metrics: http.NotFoundHandler()})
	d, err := openapitest.Shared()
	if err != nil {
		t.Fatal(err)
	}
	mounted := map[string]string{}
	for _, r := range s.Routes() {
		mounted[r.Method+" "+r.Path] = r.Scope
	}
	documented := map[string]string{}
	for path, item := range d.T.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			if op.Security == nil {
				t.Errorf("%s: no security requirement (write security: [] for a public route)", key)
				continue
			}
			var schemes []string
			for _, req := range *op.Security {
				for name := range req {
					schemes = append(schemes, name)
				}
			}
			if len(schemes) > 1 {
				t.Errorf("%s: security %v, want one scope", key, schemes)
			}
			documented[key] = strings.Join(schemes, "")
		}
	}
	for _, k := range sorted(mounted) {
		scope, ok := documented[k]
		switch {
		case !ok:
			t.Errorf("route %s is mounted but not in api/openapi.yaml", k)
		case scope != mounted[k]:
			t.Errorf("route %s needs scope %q, the document says %q", k, mounted[k], scope)
		}
	}
	for _, k := range sorted(documented) {
		if _, ok := mounted[k]; !ok {
			t.Errorf("api/openapi.yaml documents %s, which is not mounted", k)
		}
	}
	if len(mounted) < 25 {
		t.Fatalf("only %d routes mounted: %v", len(mounted), sorted(mounted))
	}
}

func sorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// GET /v1/openapi.json needs no key and serves the document as JSON.
func TestOpenAPIServed(t *testing.T) {
	e := paywatchtest.New(t)
	st, body := e.Do("GET", "/v1/openapi.json", "", nil)
	if st != 200 {
		t.Fatalf("GET /v1/openapi.json: %d %s", st, body)
	}
	want, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(body), want) {
		t.Fatalf("served document differs from the embedded one (%d bytes, want %d)", len(body), len(want))
	}
	// A key is not refused either.
	if st, _ := e.Do("GET", "/v1/openapi.json", "storefront", nil); st != 200 {
		t.Fatalf("with a key: %d", st)
	}
}
