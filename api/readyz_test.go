package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/paywatchtest"
)

// /readyz is unauthenticated: its answer is computed (a ping and a
// migrations query) at most once a second, whatever the number of hits.
// A change in readiness shows once the second is over.
func TestReadyzAnswerIsCachedForASecond(t *testing.T) {
	e := paywatchtest.New(t)
	ctx := context.Background()
	if st, body := e.Do("GET", "/readyz", "", nil); st != 200 {
		t.Fatalf("readyz: %d %s", st, body)
	}
	var version int64
	var name string
	if err := e.Store.Pool().QueryRow(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)
		RETURNING version, name`).Scan(&version, &name); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := e.Store.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version, name); err != nil {
			t.Errorf("restoring migration %d: %v", version, err)
		}
	}()
	before := e.Store.Pool().Stat().AcquireCount()
	for range 50 {
		if st, body := e.Do("GET", "/readyz", "", nil); st != 200 {
			t.Fatalf("readyz within the second: %d %s (computed again)", st, body)
		}
	}
	if n := e.Store.Pool().Stat().AcquireCount() - before; n >= 50 {
		t.Fatalf("50 hits within a second took %d connections", n)
	}
	e.Clock.Advance(time.Second)
	st, body := e.Do("GET", "/readyz", "", nil)
	if st != 503 || !strings.Contains(string(body), "migrations_pending") {
		t.Fatalf("readyz a second later with a migration missing: %d %s", st, body)
	}
}

// Every API answer says nosniff: a JSON body with HTML in a string is never
// rendered as a page.
func TestAPIAnswersSayNosniff(t *testing.T) {
	e := paywatchtest.New(t)
	for _, c := range []struct{ method, path, scope string }{
		{"GET", "/healthz", ""}, {"GET", "/readyz", ""}, {"GET", "/v1/openapi.json", ""},
		{"GET", "/v1/methods", "storefront"}, {"GET", "/v1/methods", ""}, {"GET", "/v1/nope", "storefront"},
		{"POST", "/v1/intents", "storefront"},
	} {
		req, _ := http.NewRequest(c.method, e.Server.URL+c.path, strings.NewReader("{"))
		if c.scope != "" {
			req.Header.Set("Authorization", "Bearer "+e.Keys[c.scope])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q", c.method, c.path, resp.StatusCode, got)
		}
	}
}

// BenchmarkReadyz measures /readyz over HTTP and the database connections
// it takes per request (acquires/op): the answer is computed once a second
// (the Env's clock stands still here, so once in all).
func BenchmarkReadyz(b *testing.B) {
	e := paywatchtest.New(b)
	client := e.Server.Client()
	before := e.Store.Pool().Stat().AcquireCount()
	b.ResetTimer()
	for range b.N {
		resp, err := client.Get(e.Server.URL + "/readyz")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("readyz: %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(e.Store.Pool().Stat().AcquireCount()-before)/float64(b.N), "acquires/op")
}
