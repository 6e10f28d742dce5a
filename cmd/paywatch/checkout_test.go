package main

import (
	"bufio"
	"bytes"
	"context"
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
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// The daemon serves the payment pages under /pay/ when checkout is on:
// intents carry payment_page_url under the public base URL, the page and
// its live stream follow a real payment, the open streams are a metric,
// and a shutdown ends them at once. Without the secret it refuses to
// start, naming the setting.
func TestServeCheckoutPage(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tron.SetSolidifiedLag(2)
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
log_level: warn
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
networks:
  tron: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50}
checkout:
  enabled: true
  public_base_url: "https://pay.example.com/"
  secret_env: PAYWATCH_TEST_CHECKOUT_SECRET
  storefront_name: "Serve Test Shop"
`, db, tronSrv.URL, addresses.SandboxKeys[payment.Tron])), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	log := newLogger(io.Discard, "warn")
	t.Setenv("PAYWATCH_TEST_CHECKOUT_SECRET", "too short")
	if _, err := newDaemon(ctx, cfg, log); err == nil || !strings.Contains(err.Error(), "checkout.secret_env: $PAYWATCH_TEST_CHECKOUT_SECRET") {
		t.Fatalf("a short secret: %v", err)
	}
	t.Setenv("PAYWATCH_TEST_CHECKOUT_SECRET", strings.Repeat("s3cr3t-", 6))
	d, err := newDaemon(ctx, cfg, log)
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
	api := apiCaller(t, base, plain)
	var in map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, v, raw := api("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-PAGE", "amount_usd": "5.00", "method": "TRX"})
		if st == 201 {
			in = v
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create: %d %s", st, raw)
		}
		time.Sleep(25 * time.Millisecond)
	}
	pageURL, _ := in["payment_page_url"].(string)
	path, ok := strings.CutPrefix(pageURL, "https://pay.example.com/pay/")
	if !ok || len(path) != 43 {
		t.Fatalf("payment_page_url %q", pageURL)
	}
	resp, err := http.Get(base + "/pay/" + path)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Serve Test Shop") || !strings.Contains(string(page), in["address"].(string)) {
		t.Fatalf("page: %d\n%s", resp.StatusCode, page)
	}
	// Two streams: one follows the payment to paid (and ends), one of
	// another intent stays open across the shutdown.
	st, other, raw := api("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-IDLE", "amount_usd": "5.00", "method": "TRX"})
	if st != 201 {
		t.Fatalf("create: %d %s", st, raw)
	}
	otherPath := strings.TrimPrefix(other["payment_page_url"].(string), "https://pay.example.com/pay/")
	open := func(path string) (*bufio.Reader, io.Closer) {
		resp, err := http.Get(base + "/pay/" + path + "/live")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("live: %v %v", resp, err)
		}
		return bufio.NewReader(resp.Body), resp.Body
	}
	follow, fc := open(path)
	defer fc.Close()
	idle, ic := open(otherPath)
	defer ic.Close()
	to, err := addresses.TronAccount(in["address"].(string))
	if err != nil {
		t.Fatal(err)
	}
	tron.PayTRX(bytes.Repeat([]byte{7}, 20), to, 20_000_000, true)
	for {
		line, err := follow.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before paid: %v", err)
		}
		if strings.Contains(line, `"state":"paid"`) {
			break
		}
	}
	mresp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(metrics), "paywatch_checkout_live_connections 1") {
		t.Fatalf("metrics: the idle stream is not counted:\n%.3000s", metrics)
	}
	stopped := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop with a stream open")
	}
	if took := time.Since(stopped); took > 5*time.Second {
		t.Errorf("the shutdown waited %s for the open stream", took)
	}
	if _, err := io.ReadAll(idle); err != nil {
		t.Fatalf("the idle stream did not end cleanly: %v", err)
	}
}
