package daemon

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

// The daemon serves the console under /console/ on the API's listener when
// console.enabled (the default), the API everywhere else, and no console
// when it is off.
func TestDaemonMountsTheConsole(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		cfg, err := config.Parse(strings.NewReader("database_url: "+devnettest.Database(t)+
			"\nrates: {sources: [static], min_sources: 1, static: {BTC: \"50000\"}}\n"), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		cfg.Console.Enabled = enabled
		d, err := New(context.Background(), cfg, Deps{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(d.handler())
		// What the API answers is checked against the OpenAPI document; the
		// console's own pages are not the API's.
		api := &http.Client{Transport: openapitest.Transport(t, nil)}
		get := func(path string) (*http.Response, string) {
			c := api
			if enabled && strings.HasPrefix(path, "/console/") {
				c = http.DefaultClient
			}
			resp, err := c.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, string(b)
		}
		resp, body := get("/console/signin")
		if enabled && (resp.StatusCode != 200 || !strings.Contains(body, `name="api_key"`) ||
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")) {
			t.Fatalf("console on: %d %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
		if !enabled && (resp.StatusCode != 404 || !strings.Contains(body, "not_found")) {
			t.Fatalf("console off: %d %s", resp.StatusCode, body)
		}
		if resp, _ := get("/v1/methods"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("API beside the console (enabled=%v): %d", enabled, resp.StatusCode)
		}
		if d.cfg.Console.SignInLinks {
			t.Fatal("serve enables sign-in links")
		}
		if resp, _ := get("/console/signin/link?t=x"); enabled && resp.StatusCode == http.StatusUnauthorized {
			t.Fatal("serve exchanges one-time sign-in links by default")
		}
		srv.Close()
		d.Close()
	}
}
