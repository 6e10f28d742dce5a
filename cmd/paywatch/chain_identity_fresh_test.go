package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// A daemon whose Tron node is on another chain from its very first step
// (no cursor was ever placed) says so: /v1/status names both chains as
// critical (it said "not started yet" with no error), the
// paywatch_network_critical gauge is 1 (it stayed 0), TRX intents are
// refused naming the node's chain, and the refusal is logged once, not at
// every step (issue 34 item 4).
func TestANodeOnAnotherChainFromTheStartIsCritical(t *testing.T) {
	db := devnettest.Database(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nile := tronfake.New()
	if err := nile.SetGenesisID(tron.NileGenesis); err != nil {
		t.Fatal(err)
	}
	nile.SetSolidifiedLag(2)
	srv := httptest.NewServer(nile)
	defer srv.Close()
	go nile.Produce(ctx, 50*time.Millisecond)

	path := filepath.Join(t.TempDir(), "paywatch.yaml")
	y := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
instance: test-identity-fresh
log_level: error
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
networks:
  tron: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50}
`, db, srv.URL, addresses.SandboxKeys[payment.Tron])
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	d, err := newDaemon(ctx, cfg, newLogger(logs, "error"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	plain, _, err := d.Store().CreateAPIKey(ctx, "k-fresh", []string{"storefront", "operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	base := "http://" + <-addrCh
	call := apiCaller(t, base, plain)
	// Waits for conditions, bounded generously: a refused step backs off up
	// to a minute (MaxBackoff), and a loaded machine is slow.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Minute); !cond(); time.Sleep(25 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	var tronStatus map[string]any
	waitFor("tron to be critical in /v1/status", func() bool {
		_, st, _ := call("GET", "/v1/status", nil)
		nets, _ := st["networks"].([]any)
		for _, n := range nets {
			if m, _ := n.(map[string]any); m["network"] == "tron" {
				tronStatus = m
			}
		}
		return tronStatus != nil && tronStatus["critical"] != nil && tronStatus["critical"] != ""
	})
	critical := fmt.Sprint(tronStatus["critical"])
	for _, want := range []string{"another chain", tron.NileGenesis, "Nile", "networks.tron.chain is regtest"} {
		if !strings.Contains(critical, want) {
			t.Errorf("critical %q does not say %q", critical, want)
		}
	}
	if avail := fmt.Sprint(tronStatus["unavailable_reason"]); !strings.Contains(avail, "Nile") {
		t.Errorf("unavailable_reason %q does not say why", avail)
	}
	metrics := func() string {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if m := metrics(); !strings.Contains(m, `paywatch_network_critical{network="tron"} 1`) {
		t.Errorf("paywatch_network_critical for tron is not 1:\n%s", grepLines(m, "paywatch_network_critical"))
	}
	st, _, raw := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-NILE", "amount_usd": "5.00", "method": "TRX"})
	if st != 503 || !strings.Contains(raw, "Nile") {
		t.Fatalf("a TRX intent while the node is Nile's: %d %s", st, raw)
	}
	// Many more refused steps: still one log line.
	steps := func() int {
		m := regexp.MustCompile(`paywatch_scan_steps_total\{network="tron"\} (\d+)`).FindStringSubmatch(metrics())
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// At least five refused steps in all, one of them after the status
	// said critical (later steps back off towards a minute each, so the
	// test does not wait for many of them).
	first := steps()
	want := max(first+1, 5)
	waitFor("more scanner steps", func() bool { return steps() >= want })
	if n := strings.Count(logs.String(), `"msg":"the node is on another chain than configured`); n != 1 {
		t.Fatalf("the refusal was logged %d times over %d+ steps, want once:\n%s", n, want, logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
