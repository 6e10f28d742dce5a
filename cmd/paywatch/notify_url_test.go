package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// syncBuffer is a bytes.Buffer safe for the daemon's concurrent log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeUsesSolanaNotifyURL: networks.solana.notify_url names the pubsub
// websocket when it is not on the RPC URL (a bare agave node serves it on
// the RPC port + 1). Here the RPC URL refuses websocket upgrades and the
// poll interval is an hour, so the SOL payment is found only through the
// configured URL's slotSubscribe. The URL's API key never reaches a log
// line or the status answer, not even when the subscription is dropped.
func TestServeUsesSolanaNotifyURL(t *testing.T) {
	db := devnettest.Database(t)
	sol := solanafake.New()
	const secret = "n0tify-k3y-s3cret"
	rpcSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			http.NotFound(w, r) // as agave's HTTP port answers an upgrade
			return
		}
		sol.ServeHTTP(w, r)
	}))
	defer rpcSrv.Close()
	pubsubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api-key") != secret || !websocket.IsWebSocketUpgrade(r) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		sol.ServeHTTP(w, r)
	}))
	defer pubsubSrv.Close()
	notifyURL := "ws://" + strings.TrimPrefix(pubsubSrv.URL, "http://") + "/?api-key=" + secret
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sol.Produce(ctx, 50*time.Millisecond)

	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	cfgYAML := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
instance: test-notify
log_level: debug
rates: {sources: [static], min_sources: 1, static: {SOL: "200"}, refresh: "@every 1s"}
methods:
  SOL: {enabled: true}
networks:
  solana: {enabled: true, chain: regtest, rpc_url: %q, notify_url: %q, poll_interval: 1h, mode: block, max_lag_blocks: 500}
`, db, rpcSrv.URL, notifyURL)
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	d, err := newDaemon(ctx, cfg, newLogger(logs, "debug"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := importPool(ctx, d.Store(), strings.NewReader(strings.Join(addresses.SandboxSolanaPool[:2], "\n"))); err != nil {
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
	call := apiCaller(t, base, plain)
	// waitFor polls a condition of the daemon's API or of the fake node.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		timeout := time.After(30 * time.Second)
		for !cond() {
			select {
			case <-tick.C:
			case <-timeout:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("a slotSubscribe on notify_url", func() bool { return sol.Subscriptions() == 1 })
	var in map[string]any
	waitFor("a SOL intent to be accepted", func() bool {
		st, v, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-SOL-1", "amount_usd": "5.00", "method": "SOL"})
		in = v
		return st == 201
	})
	to, err := addresses.ParseAddress(payment.Solana, "mainnet", in["address"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var dst, from [32]byte
	copy(dst[:], to.Key)
	from[0] = 9
	sol.PaySOL(from, dst, 25_000_000, false, false)
	id := in["id"].(string)
	waitFor("intent "+id+" to be paid (woken by slot notifications only)", func() bool {
		_, v, _ := call("GET", "/v1/intents/"+id, nil)
		return v["status"] == "paid"
	})
	// A lost subscription is logged and retried: still without the key.
	sol.DropSubscriptions()
	waitFor("the lost subscription to be logged", func() bool { return strings.Contains(logs.String(), "node notifications lost") })
	waitFor("the subscription to be back", func() bool { return sol.Subscriptions() == 1 })
	_, _, status := call("GET", "/v1/status", nil)
	for what, text := range map[string]string{"log": logs.String(), "status": status} {
		if strings.Contains(text, secret) {
			t.Errorf("the notify_url's API key is in the %s:\n%s", what, text)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v on cancel, want nil", err)
	}
}
