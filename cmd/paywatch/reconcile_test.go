package main

import (
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

// The daemon runs the reconciler: a run asked for with
// POST /v1/networks/tron/reconcile is done within seconds, shows in
// /v1/status and in the metrics; `paywatch reconcile` runs one from the
// command line.
func TestServeRunsTheReconciler(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tron.SetSolidifiedLag(2)
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	cfgYAML := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
instance: test-rec
log_level: warn
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
networks:
  tron: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50}
reconcile: {schedule: "@hourly", blocks: 20, rate_per_second: 100}
`, db, tronSrv.URL, addresses.SandboxKeys[payment.Tron])
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDaemon(ctx, cfg, newLogger(io.Discard, "warn"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	plain, _, err := d.Store().CreateAPIKey(ctx, "ops", []string{"operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	base := "http://" + <-addrCh
	api := apiCaller(t, base, plain)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("the tron scanner to start", func() bool {
		_, err := d.Store().GetCursor(ctx, "tron")
		return err == nil
	})
	if st, body, raw := api("POST", "/v1/networks/tron/reconcile", nil); st != 202 || body["status"] != "scheduled" {
		t.Fatalf("reconcile request: %d %s", st, raw)
	}
	var rec map[string]any
	waitFor("the daemon's reconcile run", func() bool {
		st, body, _ := api("GET", "/v1/status", nil)
		if st != 200 {
			return false
		}
		rec, _ = body["reconcile"].(map[string]any)
		runs, _ := rec["runs"].([]any)
		if len(runs) != 1 {
			return false
		}
		run := runs[0].(map[string]any)
		return run["network"] == "tron" && run["runs"] == float64(1) && run["last_finished_at"] != nil && run["requested_at"] == nil
	})
	if rec["open_findings"] != float64(0) || rec["live_findings"] != float64(0) {
		t.Fatalf("findings on a clean chain: %v", rec)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `paywatch_reconcile_last_run_node_calls{network="tron"}`) {
		t.Fatalf("no reconcile metric:\n%s", metrics)
	}
	// The command line runs one now, against the configured node.
	var out, errOut strings.Builder
	if err := run(ctx, []string{"reconcile", "-config", cfgPath, "-network", "tron"}, &out, &errOut); err != nil {
		t.Fatalf("paywatch reconcile: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), `"network": "tron"`) || !strings.Contains(out.String(), `"findings": []`) ||
		strings.Contains(out.String(), tronSrv.URL) {
		t.Fatalf("paywatch reconcile printed:\n%s", out.String())
	}
	if err := run(ctx, []string{"reconcile", "-config", cfgPath, "-network", "dogecoin"}, &out, &errOut); err == nil {
		t.Fatal("an unknown network was accepted")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
