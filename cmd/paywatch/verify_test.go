package main

import (
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
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// Issue 33 item 5, end to end through `paywatch serve`: a Tron network
// whose scanner reads the honest node and whose verifier (role verify)
// reads it through a proxy that lies about an amount. An intent below
// large_amount_usd is paid as ever; a large one whose transfer the
// verifier shows with another amount stays detected, held, counted and
// shown in the status and the metrics; once the verifier tells the truth
// it is paid.
func TestServeHoldsALargePaymentALyingVerifierDisputes(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	liar := faultyproxy.New(faultyproxy.Tron, tronSrv.URL)
	defer liar.Close()
	// 200 USD at 0.25 is 800 TRX: the verifier says 700.
	liar.Set(faultyproxy.Fault{Lie: &faultyproxy.Lie{Find: `"amount":800000000`, Replace: `"amount":700000000`}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
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
    large_amount_usd: "100.00"
    endpoints:
      - {name: scanner, url: %q, role: scan}
      - {name: checker, url: %q, role: verify}
`, db, addresses.SandboxKeys[payment.Tron], tronSrv.URL, liar.URL())), 0o600); err != nil {
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
	base := "http://" + <-addrCh
	call := apiCaller(t, base, plain)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		timeout := time.After(90 * time.Second)
		for !cond() {
			select {
			case <-tick.C:
			case <-timeout:
				t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
			}
		}
	}
	pay := func(ref, usd string, sun int64) string {
		t.Helper()
		var in map[string]any
		waitFor("a TRX intent to be accepted", func() bool {
			st, v, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": ref, "amount_usd": usd, "method": "TRX"})
			in = v
			return st == 201
		})
		to, err := addresses.TronAccount(in["address"].(string))
		if err != nil {
			t.Fatal(err)
		}
		tron.PayTRX(bytes.Repeat([]byte{7}, 20), to, sun, true)
		return in["id"].(string)
	}
	status := func(id string) string {
		_, v, _ := call("GET", "/v1/intents/"+id, nil)
		s, _ := v["status"].(string)
		return s
	}
	// Below the threshold: paid without a second source.
	small := pay("ORD-SMALL", "5.00", 20_000_000)
	waitFor("the small intent to be paid", func() bool { return status(small) == "paid" })

	// Above it, with the verifier lying: held in detected, shown.
	large := pay("ORD-LARGE", "200.00", 800_000_000)
	var held map[string]any
	waitFor("the status to show the large intent held by a disagreement", func() bool {
		_, v, _ := call("GET", "/v1/status", nil)
		held = nil
		nets, _ := v["networks"].([]any)
		for _, n := range nets {
			n, _ := n.(map[string]any)
			if n["network"] != "tron" {
				continue
			}
			ver, _ := n["verification"].(map[string]any)
			hs, _ := ver["held_intents"].([]any)
			for _, h := range hs {
				if h, _ := h.(map[string]any); h["intent_id"] == large && h["state"] == "disagrees" {
					held = ver
				}
			}
		}
		return held != nil
	})
	if st := status(large); st != "detected" {
		t.Fatalf("a large intent a verifier disputes is %s, want detected", st)
	}
	if held["disagreements"].(float64) < 1 || held["held"].(float64) != 1 || held["large_amount_usd"] != "100.00" {
		t.Fatalf("verification status: %v", held)
	}
	if vs, _ := held["verifiers"].([]any); len(vs) != 1 || vs[0] != "checker" {
		t.Fatalf("verifiers: %v", held["verifiers"])
	}
	// The status is the whole instance's: a store's key is refused it
	// (issue 34), and learns nothing of the held payment.
	k, _, err := d.Store().CreateStoreAPIKey(ctx, "ops-default", []string{"operator"}, "default", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st, _, raw := apiCaller(t, base, k)("GET", "/v1/status", nil); st != 403 || strings.Contains(raw, large) {
		t.Fatalf("a store's key reading the status: %d %s", st, raw)
	}
	metrics := scrape(t, base+"/metrics")
	for _, want := range []string{`paywatch_verification_disagreements_total{network="tron"} 1`,
		`paywatch_verification_held_intents{network="tron",state="disagrees"} 1`,
		`paywatch_endpoint_verifications_total{endpoint="checker",network="tron",result="disagrees"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(logs.String(), "second source disagrees") {
		t.Errorf("no log line for the disagreement")
	}
	// Still held after a later block and check: the verifier's lie never
	// pays it.
	if st := status(large); st != "detected" {
		t.Fatalf("the disputed intent became %s", st)
	}

	// The verifier tells the truth: the intent is paid.
	liar.Set(faultyproxy.Fault{})
	waitFor("the large intent to be paid once the verifier agrees", func() bool { return status(large) == "paid" })
	_, v, _ := call("GET", "/v1/status", nil)
	for _, n := range v["networks"].([]any) {
		if n := n.(map[string]any); n["network"] == "tron" {
			if ver := n["verification"].(map[string]any); ver["held"].(float64) != 0 {
				t.Fatalf("still held after agreement: %v", ver)
			}
			for _, e := range n["endpoints"].([]any) {
				e := e.(map[string]any)
				if e["name"] == "checker" && (e["verifications"] != 1.0 || e["disagreements"] != 1.0) {
					t.Fatalf("the checker's counts: %v", e)
				}
				if e["name"] == "scanner" && (e["verifications"] != nil || e["disagreements"] != nil) {
					t.Fatalf("the scanner verified: %v", e)
				}
			}
		}
	}
	if !strings.Contains(logs.String(), "large payment verified by a second source") {
		t.Errorf("no log line for the verification")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v on cancel, want nil", err)
	}
}

// scrape returns the metrics page at url.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// Issue 33 item 5: a network that sets large_amount_usd with one rpc_url
// (no endpoint of another provider) starts with a warning naming the key,
// and holds its large intents (no_verifier), never paying them, while a
// small one is paid.
func TestServeHoldsLargePaymentsWithoutASecondSource(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
log_level: info
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25"}}
methods:
  TRX: {enabled: true, confirmations: 0}
networks:
  tron: {enabled: true, chain: regtest, account_key: %q, poll_interval: 50ms, max_lag_blocks: 50, large_amount_usd: "100.00", rpc_url: %q}
`, db, addresses.SandboxKeys[payment.Tron], tronSrv.URL)), 0o600); err != nil {
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
	if !strings.Contains(logs.String(), "networks.tron.large_amount_usd is set but the network has no second endpoint") {
		t.Fatalf("no warning at start:\n%s", logs.String())
	}
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
		timeout := time.After(90 * time.Second)
		for !cond() {
			select {
			case <-tick.C:
			case <-timeout:
				t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
			}
		}
	}
	pay := func(ref, usd string, sun int64) string {
		t.Helper()
		var in map[string]any
		waitFor("a TRX intent to be accepted", func() bool {
			st, v, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": ref, "amount_usd": usd, "method": "TRX"})
			in = v
			return st == 201
		})
		to, err := addresses.TronAccount(in["address"].(string))
		if err != nil {
			t.Fatal(err)
		}
		tron.PayTRX(bytes.Repeat([]byte{7}, 20), to, sun, true)
		return in["id"].(string)
	}
	status := func(id string) string {
		_, v, _ := call("GET", "/v1/intents/"+id, nil)
		s, _ := v["status"].(string)
		return s
	}
	large := pay("ORD-LARGE", "200.00", 800_000_000)
	waitFor("the large intent to be held: no verifier", func() bool {
		_, v, _ := call("GET", "/v1/status", nil)
		for _, n := range v["networks"].([]any) {
			n := n.(map[string]any)
			ver, _ := n["verification"].(map[string]any)
			hs, _ := ver["held_intents"].([]any)
			for _, h := range hs {
				if h := h.(map[string]any); h["intent_id"] == large && h["state"] == "no_verifier" {
					return true
				}
			}
		}
		return false
	})
	// A later small payment is paid: the scan went past the large one's
	// block, which is confirmed, yet that intent stays detected.
	small := pay("ORD-SMALL", "5.00", 20_000_000)
	waitFor("the small intent to be paid", func() bool { return status(small) == "paid" })
	if st := status(large); st != "detected" {
		t.Fatalf("a large intent without a second source is %s, want detected", st)
	}
	// `paywatch status` reads the same from the database.
	var out, errb bytes.Buffer
	if err := runStatus(ctx, []string{"--config", cfgPath}, &out, &errb); err != nil {
		t.Fatalf("paywatch status: %v %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "1 large payment(s) held for a second source") {
		t.Fatalf("paywatch status does not show the held payment:\n%s", out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v on cancel, want nil", err)
	}
}
