package api_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/paywatch/paywatch/paywatchtest"
)

// A path with dot segments or doubled slashes is answered 404 not_found as
// JSON, not redirected to its cleaned form: ServeMux's redirect was an HTML
// 307 the API does not document, and it re-sent a POST to whatever route the
// cleaned path named ("/v1/intents/x/../../intents" is POST /v1/intents).
func TestUncleanPathIsNotFound(t *testing.T) {
	e := paywatchtest.New(t)
	noFollow := &http.Client{Transport: e.Server.Client().Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/intents/.."},
		{"GET", "/v1/accounts/../ledger"},
		{"GET", "/v1//methods"},
		{"POST", "/v1/intents/x/../../intents"},
		{"GET", "/v1/accounts/%2F/balance"},
	} {
		req, err := http.NewRequest(c.method, e.Server.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.Keys["storefront"])
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || apiCode(body) != "not_found" || resp.Header.Get("Location") != "" {
			t.Errorf("%s %s: %d %s (Location %q), want 404 not_found: %.200s", c.method, c.path, resp.StatusCode,
				resp.Header.Get("Content-Type"), resp.Header.Get("Location"), body)
		}
	}
}
