package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

// With admin_listen, /metrics and the console are served there and only
// there: the API's listener answers 404 for them, and the admin listener
// serves nothing of the API.
func TestAdminListenerServesMetricsAndTheConsole(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("database_url: "+devnettest.Database(t)+
		"\nlisten: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nlog_level: error\n"+
		"rates: {sources: [static], min_sources: 1, static: {BTC: \"50000\"}}\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := newDaemon(ctx, cfg, newLogger(io.Discard, "error"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	apiBase := "http://" + <-addrCh
	adminBase := "http://" + d.AdminAddr()
	var contentType string
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		contentType = resp.Header.Get("Content-Type")
		return resp.StatusCode, string(b)
	}
	// No network is enabled, so the exposition is empty; its content type
	// is Prometheus's.
	if st, body := get(adminBase + "/metrics"); st != 200 || !strings.HasPrefix(contentType, "text/plain; version=0.0.4") {
		t.Fatalf("admin /metrics: %d %s %.300s", st, contentType, body)
	}
	if st, body := get(adminBase + "/console/signin"); st != 200 || !strings.Contains(body, `name="api_key"`) {
		t.Fatalf("admin /console/signin: %d", st)
	}
	for _, path := range []string{"/metrics", "/console/signin"} {
		if st, _ := get(apiBase + path); st != 404 {
			t.Errorf("the API listener serves %s: %d", path, st)
		}
	}
	if st, _ := get(apiBase + "/healthz"); st != 200 {
		t.Errorf("API /healthz: %d", st)
	}
	if st, _ := get(adminBase + "/v1/methods"); st != 404 {
		t.Errorf("the admin listener serves the API: %d", st)
	}
	// Headers are bounded on every listener (16 KB, not net/http's 1 MB):
	// a 64 KB header is refused before any handler runs (issue 34 item 4).
	for _, url := range []string{apiBase + "/healthz", adminBase + "/metrics"} {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Last-Event-ID", strings.Repeat("a", 64<<10))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%s with a 64 KB header: %d, want 431", url, resp.StatusCode)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
}
