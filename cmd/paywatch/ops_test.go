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
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// repoFile is a path from the repository's root.
func repoFile(p string) string { return filepath.Join("..", "..", p) }

// TestAlertRules checks the alert rules with promtool (check rules) and
// runs their unit tests (test rules: every alert firing and not firing).
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		devnettest.Need(t, "promtool (apt-get install prometheus)", err)
	}
	for _, args := range [][]string{{"check", "rules", "paywatch-rules.yml"}, {"test", "rules", "paywatch-rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = repoFile("deploy/prometheus")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Every alert has a unit test, a summary, a severity and a runbook
	// that exists in docs/operating.md, where its runbook_url points.
	rules, _ := os.ReadFile(repoFile("deploy/prometheus/paywatch-rules.yml"))
	tests, _ := os.ReadFile(repoFile("deploy/prometheus/paywatch-rules.test.yml"))
	runbooks, err := os.ReadFile(repoFile("docs/operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(runbooks), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	alerts := regexp.MustCompile(`(?m)^  - alert: (\w+)$`).FindAllStringSubmatch(string(rules), -1)
	if len(alerts) < 15 {
		t.Fatalf("%d alerts", len(alerts))
	}
	for _, a := range alerts {
		name := a[1]
		if !strings.Contains(string(tests), "alertname: "+name+"\n") {
			t.Errorf("%s has no promtool unit test", name)
		}
		if !anchors["alert-"+strings.ToLower(name)] {
			t.Errorf("%s: its runbook anchor #alert-%s is not a heading of docs/operating.md", name, strings.ToLower(name))
		}
		want := "runbook_url: https://github.com/paywatch/paywatch/blob/main/docs/operating.md#alert-" + strings.ToLower(name) + "\n"
		if !strings.Contains(string(rules), want) {
			t.Errorf("%s: no %q", name, strings.TrimSpace(want))
		}
	}
	for _, want := range []string{"severity:", "summary:", "runbook_url:"} {
		if n := strings.Count(string(rules), want); n != len(alerts) {
			t.Errorf("%d of %d alerts have %s", n, len(alerts), want)
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading.
func githubAnchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// metricNames are the paywatch_ metric names an expression uses
// (histogram series reduced to their metric).
func metricNames(expr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`paywatch_[a-z0-9_]+`).FindAllString(expr, -1) {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			m = strings.TrimSuffix(m, suf)
		}
		out = append(out, m)
	}
	return out
}

// TestRulesAndDashboardUseMetricsTheDaemonExports runs the daemon (Tron
// and Solana fake nodes, a webhook endpoint), scrapes its /metrics and
// checks that every metric the alert rules and the Grafana dashboard use
// exists under that name.
func TestRulesAndDashboardUseMetricsTheDaemonExports(t *testing.T) {
	db := devnettest.Database(t)
	tron := tronfake.New()
	tronSrv := httptest.NewServer(tron)
	defer tronSrv.Close()
	sol := solanafake.New()
	solSrv := httptest.NewServer(sol)
	defer solSrv.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	defer hook.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tron.Produce(ctx, 50*time.Millisecond)
	go sol.Produce(ctx, 50*time.Millisecond)
	t.Setenv("PAYWATCH_TEST_HOOK_SECRET", hookSecret)
	cfgPath := filepath.Join(t.TempDir(), "paywatch.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %[1]q
log_level: warn
rates: {sources: [static], min_sources: 1, static: {TRX: "0.25", SOL: "200", USDT: "1"}, refresh: "@every 1s"}
methods:
  TRX: {enabled: true, confirmations: 0}
  SOL: {enabled: true}
networks:
  tron:
    enabled: true
    chain: regtest
    account_key: %[3]q
    poll_interval: 50ms
    max_lag_blocks: 50
    large_amount_usd: "1000.00"
    endpoints:
      - {name: own, url: %[2]q}
      - {name: rented, url: %[2]q, priority: 1, max_requests_per_second: 1000, daily_budget: 10000000}
  solana: {enabled: true, chain: regtest, rpc_url: %[4]q, poll_interval: 50ms, mode: block, max_lag_blocks: 500}
webhooks:
  - {name: shop, url: %[5]q, secret_env: PAYWATCH_TEST_HOOK_SECRET}
`, db, tronSrv.URL, addresses.SandboxKeys[payment.Tron], solSrv.URL, hook.URL)), 0o600); err != nil {
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
	if _, err := importPool(ctx, d.Store(), strings.NewReader(strings.Join(addresses.SandboxSolanaPool[:3], "\n"))); err != nil {
		t.Fatal(err)
	}
	plain, _, err := d.Store().CreateAPIKey(ctx, "shop", []string{"storefront"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, func(a string) { addrCh <- a }) }()
	base := "http://" + <-addrCh
	call := apiCaller(t, base, plain)
	// Waits are for conditions, bounded generously (a loaded machine is
	// slow), not by the machine's speed.
	waitCtx, waitCancel := context.WithTimeout(ctx, 5*time.Minute)
	defer waitCancel()
	var intent map[string]any
	for {
		st, v, _ := call("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-M", "amount_usd": "5.00", "method": "TRX"})
		if st == 201 {
			intent = v
			break
		}
		select {
		case <-waitCtx.Done():
			t.Fatal("no intent accepted")
		case <-time.After(50 * time.Millisecond):
		}
	}
	have := map[string]bool{}
	for waitCtx.Err() == nil {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		have = map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^(paywatch_[a-z0-9_]+)`).FindAllStringSubmatch(string(body), -1) {
			have[metricNames(m[1])[0]] = true
		}
		if have["paywatch_webhook_outbox_pending"] && have["paywatch_scanner_leader"] {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	used := map[string][]string{}
	rules, err := os.ReadFile(repoFile("deploy/prometheus/paywatch-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^    expr: (.+)$`).FindAllStringSubmatch(string(rules), -1) {
		for _, n := range metricNames(m[1]) {
			used[n] = append(used[n], "rules")
		}
	}
	for _, e := range dashboardExprs(t) {
		for _, n := range metricNames(e) {
			used[n] = append(used[n], "dashboard")
		}
	}
	var missing []string
	for n, where := range used {
		if !have[n] {
			missing = append(missing, fmt.Sprintf("%s (%s)", n, where[0]))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics used but not exported by the daemon: %v", missing)
	}
	// Issue 33 item 6: every endpoint metric the daemon exports (the Tron
	// network lists two endpoints) has a dashboard panel.
	for n := range have {
		if !strings.HasPrefix(n, "paywatch_endpoint") {
			continue
		}
		if !slices.Contains(used[n], "dashboard") {
			t.Errorf("the dashboard has no panel for %s", n)
		}
	}
	if len(used) < 25 {
		t.Errorf("only %d metrics used by the rules and the dashboard", len(used))
	}

	// The latency histograms and the database-read gauges move: the
	// intent is paid, its events delivered.
	to, err := addresses.TronAccount(intent["address"].(string))
	if err != nil {
		t.Fatal(err)
	}
	tron.PayTRX(bytes.Repeat([]byte{7}, 20), to, 20_000_000, true)
	want := map[string]func(float64) bool{
		`paywatch_detection_seconds_count{network="tron"}`:                       func(v float64) bool { return v >= 1 },
		`paywatch_confirmation_seconds_count{network="tron"}`:                    func(v float64) bool { return v >= 1 },
		`paywatch_webhook_delivery_seconds_count{endpoint="shop"}`:               func(v float64) bool { return v >= 3 },
		`paywatch_events_total{type="intent.paid"}`:                              func(v float64) bool { return v == 1 },
		`paywatch_http_requests_total{code="201",route="POST /v1/intents"}`:      func(v float64) bool { return v == 1 },
		`paywatch_http_request_duration_seconds_count{route="POST /v1/intents"}`: func(v float64) bool { return v >= 1 },
		`paywatch_intents_open{status="awaiting_payment"}`:                       func(v float64) bool { return v == 0 },
		`paywatch_webhook_outbox_pending{endpoint="shop"}`:                       func(v float64) bool { return v == 0 },
		`paywatch_database_up`:                                                   func(v float64) bool { return v == 1 },
		`paywatch_scanner_leader{network="tron"}`:                                func(v float64) bool { return v == 1 },
		`paywatch_address_pool_remaining{network="solana"}`:                      func(v float64) bool { return v == 3 },
		`paywatch_rate_available{symbol="TRX"}`:                                  func(v float64) bool { return v == 1 },
		// Issue 33 item 6: the Tron network scans through two endpoints.
		`paywatch_endpoint_state{endpoint="own",network="tron",state="healthy"}`: func(v float64) bool { return v == 1 },
		`paywatch_endpoint_calls_total{endpoint="own",network="tron"}`:           func(v float64) bool { return v >= 1 },
		`paywatch_endpoints_serving{network="tron"}`:                             func(v float64) bool { return v == 2 },
	}
	var body string
	for {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(raw)
		var wrong []string
		for series, ok := range want {
			v, found := sample(body, series)
			if !found || !ok(v) {
				wrong = append(wrong, fmt.Sprintf("%s = %v (found %v)", series, v, found))
			}
		}
		if len(wrong) == 0 {
			break
		}
		select {
		case <-waitCtx.Done():
			sort.Strings(wrong)
			t.Fatalf("after the payment: %v", wrong)
		case <-time.After(100 * time.Millisecond):
		}
	}
	// /v1/status lists each endpoint by name, never by URL.
	opKey, _, err := d.Store().CreateAPIKey(ctx, "ops", []string{"operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st, status, _ := apiCaller(t, base, opKey)("GET", "/v1/status", nil)
	raw, _ := json.Marshal(status)
	if st != 200 || !strings.Contains(string(raw), `"name":"own"`) || !strings.Contains(string(raw), `"name":"rented"`) || strings.Contains(string(raw), strings.TrimPrefix(tronSrv.URL, "http://")) {
		t.Fatalf("/v1/status: %d %s", st, raw)
	}
	// `paywatch status` lists them too, from the database.
	var out bytes.Buffer
	if err := runStatus(ctx, []string{"--config", cfgPath}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^tron +own +healthy `).MatchString(out.String()) || !strings.Contains(out.String(), "rented") ||
		strings.Contains(out.String(), strings.TrimPrefix(tronSrv.URL, "http://")) {
		t.Fatalf("paywatch status:\n%s", out.String())
	}
	cancel()
	<-done
}

// sample returns the value of one series in a text exposition.
func sample(body, series string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v, true
			}
		}
	}
	return 0, false
}

// dashboardExprs returns every query of deploy/grafana/paywatch.json.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(repoFile("deploy/grafana/paywatch.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/paywatch.json: %v", err)
	}
	var out []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

// TestDashboardAndComposeProfile checks the Grafana dashboard: valid JSON
// whose every panel queries the provisioned Prometheus datasource with
// PromQL that promtool accepts, and the compose profile "monitoring" that
// provisions it beside a Prometheus loading the rules (promtool check
// config).
func TestDashboardAndComposeProfile(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		devnettest.Need(t, "promtool (apt-get install prometheus)", err)
	}
	exprs := dashboardExprs(t)
	if len(exprs) < 20 {
		t.Fatalf("%d dashboard queries", len(exprs))
	}
	raw, _ := os.ReadFile(repoFile("deploy/grafana/paywatch.json"))
	var dash struct {
		UID    string
		Panels []struct {
			Type       string
			Title      string
			Datasource struct{ UID string }
			Targets    []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	ds, _ := os.ReadFile(repoFile("deploy/grafana/provisioning/datasources/prometheus.yml"))
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || !strings.Contains(string(ds), "uid: "+p.Datasource.UID+"\n") {
			t.Errorf("panel %q: %d queries, datasource %q not provisioned", p.Title, len(p.Targets), p.Datasource.UID)
		}
	}
	// The queries as recording rules: promtool parses their PromQL.
	var rules strings.Builder
	rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
	for i, e := range exprs {
		e = strings.ReplaceAll(e, "$network", ".*")
		q, _ := json.Marshal(e)
		fmt.Fprintf(&rules, "  - record: dashboard:q%d\n    expr: %s\n", i, q)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
		t.Fatalf("dashboard PromQL: %v\n%s", err, out)
	}
	cmd := exec.Command(promtool, "check", "config", "prometheus.yml")
	cmd.Dir = repoFile("deploy/prometheus")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	compose, _ := os.ReadFile(repoFile("docker-compose.yml"))
	for _, want := range []string{"profiles: [monitoring]", "./deploy/prometheus/paywatch-rules.yml:/etc/prometheus/paywatch-rules.yml:ro",
		"./deploy/grafana/paywatch.json:/var/lib/grafana/dashboards/paywatch.json:ro", "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro"} {
		if !strings.Contains(string(compose), want) {
			t.Errorf("docker-compose.yml lacks %q", want)
		}
	}
}
