package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// Issue 33 items 2 and 3, end to end: a Tron network of two endpoints
// whose preferred one answers 503 from the start, then 429, then lags,
// accepts intents and pays them through the other; the provider key of
// each endpoint reaches it in its header and is in no log line.
func TestServeScansThroughTheSecondEndpointWhenThePreferredFails(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tron.RequireAPIKey("honest-key")
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	faulty := faultyproxy.New(faultyproxy.Tron, tronSrv.URL)
	defer faulty.Close()
	faulty.Set(faultyproxy.Fault{Unavailable: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
	t.Setenv("TEST_FAULTY_KEY", "honest-key")
	t.Setenv("TEST_HONEST_HEADERS", "TRON-PRO-API-KEY: honest-key")
	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
log_level: info
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25"}}
methods:
  TRX: {enabled: true, confirmations: 0}
networks:
  tron:
    enabled: true
    chain: regtest
    account_key: %q
    poll_interval: 50ms
    max_lag_blocks: 50
    endpoints:
      - {name: faulty, url: %q, api_key_env: TEST_FAULTY_KEY}
      - {name: honest, url: %q, priority: 1, headers_env: TEST_HONEST_HEADERS}
`, db, addresses.SandboxKeys[payment.Tron], faulty.URL(), tronSrv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	d, err := newDaemon(ctx, cfg, newLogger(&logs, "info"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	plain, _, err := d.Store().CreateAPIKey(ctx, "shop", []string{"storefront", "operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	call := apiCaller(t, "http://"+<-addrCh, plain)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		timeout := time.After(60 * time.Second)
		for !cond() {
			select {
			case <-tick.C:
			case <-timeout:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	for i, fault := range []faultyproxy.Fault{{Unavailable: true}, {Throttle: true, RetryAfter: 2}, {Lag: 5}} {
		faulty.Set(fault)
		var in map[string]any
		ref := fmt.Sprintf("ORD-EP-%d", i)
		waitFor("a TRX intent to be accepted", func() bool {
			st, v, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": ref, "amount_usd": "5.00", "method": "TRX"})
			in = v
			return st == 201
		})
		to, err := addresses.TronAccount(in["address"].(string))
		if err != nil {
			t.Fatal(err)
		}
		tron.PayTRX(bytes.Repeat([]byte{7}, 20), to, 20_000_000, true)
		id := in["id"].(string)
		waitFor(fmt.Sprintf("intent %s to be paid with the preferred endpoint failing (%+v)", id, fault), func() bool {
			_, v, _ := call("GET", "/v1/intents/"+id, nil)
			return v["status"] == "paid"
		})
	}
	if tron.APIKeys()["honest-key"] == 0 {
		t.Fatal("no request carried the endpoint's key")
	}
	_, _, status := call("GET", "/v1/status", nil)
	for what, text := range map[string]string{"log": logs.String(), "status": status} {
		for _, secret := range []string{"honest-key", strings.TrimPrefix(tronSrv.URL, "http://"), strings.TrimPrefix(faulty.URL(), "http://")} {
			if strings.Contains(text, secret) {
				t.Errorf("%q is in the %s", secret, what)
			}
		}
	}
	if !strings.Contains(logs.String(), "endpoint") {
		t.Errorf("the faulty endpoint left no log line:\n%s", logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v on cancel, want nil", err)
	}
}
