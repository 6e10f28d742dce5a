package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// TestServeStopsANetworkOnAnotherChain runs the daemon twice over one
// database: first on its own Tron and Solana nodes, then with the Tron
// node replaced by one of the Nile testnet (behind the same regtest
// config). The second daemon keeps serving Solana, but Tron is critical
// with a message naming Nile, its cursor does not move and TRX intents are
// refused.
func TestServeStopsANetworkOnAnotherChain(t *testing.T) {
	db := devnettest.Database(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	own := tronfake.New()
	own.SetSolidifiedLag(2)
	nile := tronfake.New()
	if err := nile.SetGenesisID(tron.NileGenesis); err != nil {
		t.Fatal(err)
	}
	nile.SetSolidifiedLag(2)
	sol := solanafake.New()
	tronSrv := httptest.NewServer(own)
	defer tronSrv.Close()
	nileSrv := httptest.NewServer(nile)
	defer nileSrv.Close()
	solSrv := httptest.NewServer(sol)
	defer solSrv.Close()
	go own.Produce(ctx, 50*time.Millisecond)
	go nile.Produce(ctx, 50*time.Millisecond)
	go sol.Produce(ctx, 50*time.Millisecond)

	serve := func(tronURL string) (func(method, path string, body any) (int, map[string]any, string), func()) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "paywatch.yaml")
		y := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
instance: test-identity
log_level: error
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", SOL: "200", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
  SOL: {enabled: true}
networks:
  tron: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50}
  solana: {enabled: true, chain: regtest, rpc_url: %q, poll_interval: 50ms, mode: block, max_lag_blocks: 500}
`, db, tronURL, addresses.SandboxKeys[payment.Tron], solSrv.URL)
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		dctx, stop := context.WithCancel(ctx)
		d, err := newDaemon(dctx, cfg, newLogger(io.Discard, "error"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := importPool(dctx, d.Store(), strings.NewReader(strings.Join(addresses.SandboxSolanaPool[:3], "\n"))); err != nil {
			t.Fatal(err)
		}
		plain, _, err := d.Store().CreateAPIKey(dctx, fmt.Sprintf("k%d", time.Now().UnixNano()), []string{"storefront", "operator"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		addrCh := make(chan string, 1)
		done := make(chan error, 1)
		go func() { done <- d.Run(dctx, func(a string) { addrCh <- a }) }()
		call := apiCaller(t, "http://"+<-addrCh, plain)
		return call, func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
			d.Close()
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(25 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	network := func(call func(string, string, any) (int, map[string]any, string), name string) map[string]any {
		_, st, raw := call("GET", "/v1/status", nil)
		nets, _ := st["networks"].([]any)
		for _, n := range nets {
			if m, _ := n.(map[string]any); m["network"] == name {
				return m
			}
		}
		t.Fatalf("no %s in the status: %s", name, raw)
		return nil
	}

	call, stop := serve(tronSrv.URL)
	waitFor("a TRX intent on the daemon's own node", func() bool {
		st, _, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-OWN", "amount_usd": "5.00", "method": "TRX"})
		return st == 201
	})
	stop()

	call, stop = serve(nileSrv.URL)
	defer stop()
	var tronStatus map[string]any
	waitFor("tron to be critical", func() bool {
		tronStatus = network(call, "tron")
		return tronStatus["critical"] != nil && tronStatus["critical"] != ""
	})
	critical := fmt.Sprint(tronStatus["critical"])
	for _, want := range []string{"another chain", tron.NileGenesis, "Nile", "networks.tron.chain is regtest"} {
		if !strings.Contains(critical, want) {
			t.Errorf("critical %q does not say %q", critical, want)
		}
	}
	scanned := tronStatus["scanned_height"]
	waitFor("a SOL intent while Tron is stopped", func() bool {
		st, _, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-SOL", "amount_usd": "5.00", "method": "SOL"})
		return st == 201
	})
	st, _, raw := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-NILE", "amount_usd": "5.00", "method": "TRX"})
	if st != 503 || !strings.Contains(raw, "Nile") {
		t.Fatalf("a TRX intent while the node is Nile's: %d %s", st, raw)
	}
	if now := network(call, "tron")["scanned_height"]; now != scanned {
		t.Fatalf("tron scanned %v then %v on another chain", scanned, now)
	}
}
