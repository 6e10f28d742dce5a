package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// ourGoroutines returns the stacks of the goroutines running paywatch code,
// other than the tests' own (the test, and what it started itself).
func ourGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "github.com/paywatch/paywatch/") ||
			strings.Contains(g, "testing.tRunner") || strings.Contains(g, "created by github.com/paywatch/paywatch/cmd/paywatch.Test") ||
			strings.Contains(g, "/tronfake.") {
			continue
		}
		out = append(out, g)
	}
	return out
}

// TestServeLeavesNoGoroutineAfterCancel runs the daemon with every
// long-lived part busy (a network's leader lease and scanner, the address
// replenisher, a webhook sender, the store's listeners) and checks that
// once run returns on cancel no goroutine of ours is left: each belongs to
// the daemon's group and stops with it.
func TestServeLeavesNoGoroutineAfterCancel(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	nodeCtx, stopNode := context.WithCancel(context.Background())
	defer stopNode()
	go tron.Produce(nodeCtx, 50*time.Millisecond)
	var hooks atomic.Int64
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hooks.Add(1)
	}))
	defer hookSrv.Close()
	t.Setenv("PAYWATCH_TEST_HOOK_SECRET", hookSecret)

	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	cfgYAML := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
instance: test-shutdown
log_level: warn
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
networks:
  tron: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50, gap: 2}
webhooks:
  - {name: shop, url: %q, secret_env: PAYWATCH_TEST_HOOK_SECRET}
`, db, tronSrv.URL, addresses.SandboxKeys[payment.Tron], hookSrv.URL)
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := newDaemon(ctx, cfg, newLogger(io.Discard, "warn"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	plain, _, err := d.Store().CreateAPIKey(ctx, "shop", []string{"storefront"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	base := "http://" + <-addrCh
	client := &http.Client{Transport: openapitest.Transport(t, nil)} // answers checked against the OpenAPI document

	// Creations take pre-derived addresses (waking the replenisher) and
	// append events (delivered by the webhook sender).
	created := 0
	deadline := time.Now().Add(30 * time.Second)
	for created < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d intents accepted in 30 s", created)
		}
		body, _ := json.Marshal(map[string]string{"kind": "order", "reference": fmt.Sprintf("ORD-SD%d", created), "amount_usd": "5.00", "method": "TRX"})
		req, _ := http.NewRequest("POST", base+"/v1/intents", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+plain)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 201 {
			created++
		} else {
			time.Sleep(25 * time.Millisecond) // the scanner is not healthy yet
		}
	}
	for hooks.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d webhook deliveries in 30 s", hooks.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v on cancel, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop on cancel")
	}
	// run has returned: nothing of ours may still run (a goroutine that is
	// returning gets a moment to finish).
	left := ourGoroutines()
	for end := time.Now().Add(time.Second); len(left) > 0 && time.Now().Before(end); left = ourGoroutines() {
		time.Sleep(time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("%d goroutines of ours outlived run:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}
