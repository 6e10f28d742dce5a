package main

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// cli runs a paywatch command and returns its stdout.
func cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), err
}

func TestFinanceAndWebhookCommands(t *testing.T) {
	e := paywatchtest.New(t)
	t.Setenv("PAYWATCH_DATABASE_URL", e.Config.DatabaseURL)
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	v := e.CreateIntent("order", "ORD-CLI", "", "100.00", "BTC")
	e.Pay(v, payment.Native, big.NewInt(0), "dust")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "pay")
	e.Chains[payment.Bitcoin].Mine(1)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 {
		t.Fatalf("intent: %+v", got)
	}
	dust := got.Transfers[0]
	if dust.Classification != "dust" {
		t.Fatalf("first transfer: %+v", dust)
	}

	out, err := cli(t, "transfers", "list", "--status", "unresolved")
	if err != nil || !strings.Contains(out, dust.ID) || strings.Contains(out, got.Transfers[1].ID) {
		t.Fatalf("transfers list: %v\n%s", err, out)
	}
	if _, err := cli(t, "transfers", "resolve", dust.ID, "--action", "ignore"); err == nil || !strings.Contains(err.Error(), "note") {
		t.Fatalf("resolve without note: %v", err)
	}
	out, err = cli(t, "transfers", "resolve", dust.ID, "--action", "ignore", "--note", "address poisoning")
	if err != nil || !strings.Contains(out, `"actor":"cli:`) {
		t.Fatalf("resolve: %v\n%s", err, out)
	}
	if _, err := cli(t, "transfers", "resolve", dust.ID, "--action", "ignore", "--note", "again"); err == nil || !strings.Contains(err.Error(), "already resolved") {
		t.Fatalf("second resolve: %v", err)
	}
	var actor string
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT actor FROM resolutions WHERE transfer_id = $1`, dust.ID).Scan(&actor); err != nil || !strings.HasPrefix(actor, "cli:") {
		t.Fatalf("stored actor %q: %v", actor, err)
	}
	out, err = cli(t, "transfers", "list", "--status", "resolved", "--network", "bitcoin", "--classification", "dust")
	if err != nil || !strings.Contains(out, dust.ID) {
		t.Fatalf("resolved list: %v\n%s", err, out)
	}

	out, err = cli(t, "report", "reconcile", "--from", "2026-11-01", "--to", "2026-12-01", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "transfer_id,") {
		t.Fatalf("csv report:\n%s", out)
	}
	if out, err = cli(t, "report", "reconcile", "--from", "2026-11-01", "--to", "2026-12-01", "--format", "json"); err != nil || !strings.Contains(out, `"totals"`) {
		t.Fatalf("json report: %v\n%s", err, out)
	}

	// Redelivery moves an endpoint's cursor back and is logged.
	ctx := context.Background()
	if err := e.Store.EnsureWebhookEndpoint(ctx, "shop", "http://127.0.0.1:1/hook", "", false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE webhook_endpoints SET last_seq = (SELECT max(seq) FROM events) WHERE name = 'shop'`); err != nil {
		t.Fatal(err)
	}
	if _, err := cli(t, "webhooks", "redeliver", "--endpoint", "shop", "--from-seq", "2"); err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := e.Store.Pool().QueryRow(ctx, `SELECT last_seq FROM webhook_endpoints WHERE name = 'shop'`).Scan(&last); err != nil || last != 1 {
		t.Fatalf("cursor after redeliver: %d %v", last, err)
	}
	if _, err := cli(t, "webhooks", "redeliver", "--endpoint", "nope", "--from-seq", "1"); err == nil {
		t.Fatal("redeliver to an unknown endpoint succeeded")
	}
	out, err = cli(t, "webhooks", "log", "--endpoint", "shop")
	if err != nil || !strings.Contains(out, "redeliver") {
		t.Fatalf("webhooks log: %v\n%s", err, out)
	}
}

// hookSecret is a webhook signing secret of the length FromConfig requires.
const hookSecret = "paywatch-test-hook-secret-of-32-bytes-or-more"

// The webhook commands show endpoint URLs and delivery errors redacted,
// also for rows a daemon stored before it redacted them.
func TestWebhookCommandsRedactURLs(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	t.Setenv("PAYWATCH_DATABASE_URL", e.Config.DatabaseURL)
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	ctx := context.Background()
	raw := "https://hookuser:pa55word@shop.example/hook?token=T0KEN123"
	if err := e.Store.EnsureWebhookEndpoint(ctx, "old", raw, "", false, time.Now()); err != nil {
		t.Fatal(err)
	}
	msg := `Post "https://hookuser:***@shop.example/hook?token=T0KEN123": connection refused`
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE webhook_endpoints SET last_error = $1 WHERE name = 'old'`, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Pool().Exec(ctx, `INSERT INTO webhook_attempts (endpoint, event_seq, event_id, error, duration_ms, created_at, outcome)
		VALUES ('old', 1, 'ev_x', $1, 5, now(), 'retry')`, msg); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"endpoints", "log"} {
		out, err := cli(t, "webhooks", sub)
		if err != nil || !strings.Contains(out, "shop.example/hook") {
			t.Fatalf("webhooks %s: %v\n%s", sub, err, out)
		}
		for _, secret := range []string{"pa55word", "T0KEN123", "hookuser"} {
			if strings.Contains(out, secret) {
				t.Errorf("webhooks %s shows %q:\n%s", sub, secret, out)
			}
		}
	}
}

// Issue 34 item 4: `transfers resolve --action credit_account --rate` of a
// transfer whose rate is locked (an on-time overpayment's surplus) is
// refused naming usd_per_unit, and nothing changes; without --rate the
// surplus is credited at the lock.
func TestResolveRefusesARateForALockedTransfer(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	t.Setenv("PAYWATCH_DATABASE_URL", e.Config.DatabaseURL)
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	v := e.CreateIntent("order", "ORD-CLI-LOCK", "", "100.00", "BTC")
	e.Pay(v, payment.Native, new(big.Int).Add(paywatchtest.Units(v.AmountBaseUnits), big.NewInt(10_000)), "over")
	e.Chains[payment.Bitcoin].Mine(2)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].Classification != "overpaid" {
		t.Fatalf("intent: %+v", got)
	}
	tr := got.Transfers[0]
	before := e.Counts()
	for _, args := range [][]string{{"--rate", "50000"}, {"--rate", "20000", "--override", "customer asked"}} {
		cmd := append([]string{"transfers", "resolve", tr.ID, "--action", "credit_account", "--account", "cust-cli", "--note", "surplus"}, args...)
		if _, err := cli(t, cmd...); err == nil || !strings.Contains(err.Error(), "usd_per_unit") || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("%v on a locked rate: %v", args, err)
		}
	}
	if after := e.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("refusals changed %v -> %v", before, after)
	}
	if out, err := cli(t, "transfers", "resolve", tr.ID, "--action", "credit_account", "--account", "cust-cli", "--note", "surplus"); err != nil {
		t.Fatalf("credit at the lock: %v\n%s", err, out)
	}
	if bal := e.Balance("cust-cli"); bal.AvailableUSD != "5.00" {
		t.Fatalf("balance %+v, want 5.00 (10,000 sat at the lock of 50,000)", bal)
	}
}
