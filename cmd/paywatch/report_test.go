package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/reports"
)

// `report close` stores a period's report; `report reconcile` then prints
// the stored bytes, the same the API serves, and `--as-of` computes the
// records as they stood at a time.
func TestReportCloseAndAsOfCommands(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	t.Setenv("PAYWATCH_DATABASE_URL", e.Config.DatabaseURL)
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	v := e.CreateIntent("order", "ORD-CLOSE", "", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "close")
	e.Sync(payment.Bitcoin)
	from, to := "2026-11-01", "2026-11-30T15:00:00Z" // ended: the command runs on the wall clock

	if _, err := cli(t, "report", "close", "--from", from, "--to", "2099-01-01"); err == nil || !strings.Contains(err.Error(), "only a period that has ended") {
		t.Fatalf("closing a period that has not ended: %v", err)
	}
	out, err := cli(t, "report", "close", "--from", from, "--to", to)
	if err != nil {
		t.Fatal(err)
	}
	var c reports.ReportClose
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.ID == "" || !strings.HasPrefix(c.ClosedBy, "cli:") {
		t.Fatalf("close: %v %s", err, out)
	}
	again, err := cli(t, "report", "close", "--from", from, "--to", to)
	if err != nil || again != out {
		t.Fatalf("second close: %v\n%s\nwant\n%s", err, again, out)
	}
	if list, err := cli(t, "report", "closes"); err != nil || !strings.Contains(list, c.ID) {
		t.Fatalf("closes: %v\n%s", err, list)
	}

	// The transfer confirms after the close: the closed report keeps the
	// first confirmation, a report as of now shows the second.
	e.Chains[payment.Bitcoin].Mine(1)
	e.Sync(payment.Bitcoin)
	for _, format := range []string{"csv", "json"} {
		stored, err := cli(t, "report", "reconcile", "--from", from, "--to", to, "--format", format)
		if err != nil {
			t.Fatal(err)
		}
		st, body := e.Do("GET", "/v1/reports/reconciliation?from="+from+"&to="+to+"&format="+format, "finance", nil)
		if st != 200 || !bytes.Equal(body, []byte(stored)) {
			t.Fatalf("%s: the API serves %d\n%s\nthe command printed\n%s", format, st, body, stored)
		}
		if !strings.Contains(stored, "confirming") || strings.Contains(stored, `"closed":null`) {
			t.Fatalf("%s: the closed report is not the one stored at the close:\n%s", format, stored)
		}
	}
	live, err := cli(t, "report", "reconcile", "--from", from, "--to", to, "--as-of", "2099-01-01T00:00:00Z", "--format", "csv")
	if err == nil || !strings.Contains(err.Error(), "future") {
		t.Fatalf("as of the future: %v\n%s", err, live)
	}
	// A time after the scan (the scan ran on the Env's clock, 2026-11-30).
	live, err = cli(t, "report", "reconcile", "--from", from, "--to", to, "--as-of", "2026-12-01T00:00:00Z", "--format", "csv")
	if err != nil || !strings.Contains(live, "confirmed") || strings.Contains(live, "confirming") {
		t.Fatalf("as of now: %v\n%s", err, live)
	}
	early, err := cli(t, "report", "reconcile", "--from", from, "--to", to, "--as-of", "2026-11-30T13:00:00Z", "--format", "csv")
	if err != nil || strings.Count(strings.TrimSpace(early), "\n") != 0 {
		t.Fatalf("as of before the payment: %v\n%s", err, early)
	}
}
