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
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// TestServeEndToEnd runs the real daemon wiring (config file, migrations,
// sources, leader leases, scanners, sweep, API, metrics) against the Tron
// and Solana fake nodes, and pays a TRX intent and a SOL intent.
func TestServeEndToEnd(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tron.SetSolidifiedLag(2)
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	sol := solanafake.New()
	solSrv := httptest.NewServer(sol)
	defer solSrv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
	go sol.Produce(ctx, 50*time.Millisecond)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "paywatch.yaml")
	cfgYAML := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
instance: test-a
log_level: warn
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", SOL: "200", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
  SOL: {enabled: true}
networks:
  tron: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50}
  solana: {enabled: true, chain: regtest, rpc_url: %q, poll_interval: 50ms, mode: block, max_lag_blocks: 500}
`, db, tronSrv.URL, addresses.SandboxKeys[payment.Tron], solSrv.URL)
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	log := newLogger(io.Discard, "warn")
	d, err := newDaemon(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pool := strings.Join(addresses.SandboxSolanaPool[:3], "\n")
	if _, err := importPool(ctx, d.Store(), strings.NewReader(pool)); err != nil {
		t.Fatal(err)
	}
	plain, _, err := d.Store().CreateAPIKey(ctx, "shop", []string{"storefront", "operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	base := "http://" + <-addrCh
	api := apiCaller(t, base, plain)
	client := &http.Client{Transport: openapitest.Transport(t, nil)} // for the non-API pages
	call := func(method, path string, body any) (int, map[string]any) {
		status, out, raw := api(method, path, body)
		if out == nil {
			out = map[string]any{"raw": raw}
		}
		return status, out
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	// The scanners must be running and healthy before intents are accepted.
	var trx, solIntent map[string]any
	waitFor("a TRX intent to be accepted", func() bool {
		st, v := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-TRX", "amount_usd": "5.00", "method": "TRX"})
		trx = v
		return st == 201
	})
	waitFor("a SOL intent to be accepted", func() bool {
		st, v := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-SOL", "amount_usd": "5.00", "method": "SOL"})
		solIntent = v
		return st == 201
	})
	trxTo, err := addresses.TronAccount(trx["address"].(string))
	if err != nil {
		t.Fatal(err)
	}
	tron.PayTRX(bytes.Repeat([]byte{7}, 20), trxTo, 20_000_000, true)
	solTo, err := addresses.ParseAddress(payment.Solana, "mainnet", solIntent["address"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var to, from [32]byte
	copy(to[:], solTo.Key)
	from[0] = 9
	sol.PaySOL(from, to, 25_000_000, false, false)
	for _, id := range []string{trx["id"].(string), solIntent["id"].(string)} {
		waitFor("intent "+id+" to be paid", func() bool {
			_, v := call("GET", "/v1/intents/"+id, nil)
			return v["status"] == "paid"
		})
	}
	st, status := call("GET", "/v1/status", nil)
	if st != 200 || !strings.Contains(fmt.Sprint(status), "leader:test-a") {
		t.Fatalf("status: %d %v", st, status)
	}
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `paywatch_scanned_height{network="tron"}`) || !strings.Contains(string(metrics), `paywatch_scan_steps_total{network="solana"}`) ||
		!strings.Contains(string(metrics), `paywatch_transfers_recorded_total{asset="native",network="tron"} 1`) {
		t.Fatalf("metrics lack scanner gauges:\n%.2000s", metrics)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v on cancel, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on cancel")
	}
}

// apiCaller calls the daemon's API at base with the API key plain and
// answers the status, the JSON body as a map (nil when not an object) and
// the raw body. Every answer is checked against the OpenAPI document.
func apiCaller(t *testing.T, base, plain string) func(method, path string, body any) (int, map[string]any, string) {
	client := &http.Client{Transport: openapitest.Transport(t, nil)}
	return func(method, path string, body any) (int, map[string]any, string) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+plain)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out, string(raw)
	}
}
