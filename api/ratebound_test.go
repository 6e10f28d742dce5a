package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Issue 22, item 3: credit_account's usd_per_unit is bound to the rate
// book's quote at the transfer's time within rates.max_deviation; a rate
// outside needs an override with a reason, capped by
// finance.max_override_credit_usd, logged and evented as an override.
// Refusals change nothing.
func TestCreditAccountRateIsBoundToTheQuoteOfTheTransfersTime(t *testing.T) {
	logs := &lockedBuffer{}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithLog(slog.New(slog.NewJSONHandler(logs, nil))))
	ctx := context.Background()
	btc := payment.Bitcoin
	// Two payments of 0.01 BTC (500.00 USD at today's 50,000) to an address
	// of ours no intent has.
	payLookahead(t, e, btc, big.NewInt(1_000_000), "unknown-a")
	payLookahead(t, e, btc, big.NewInt(1_000_000), "unknown-b")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	p := inbox(t, e, "classification=unknown_address")
	if len(p.Transfers) != 2 {
		t.Fatalf("inbox %+v", p.Transfers)
	}
	a, b := p.Transfers[0], p.Transfers[1]
	credit := func(id, rate string, override any) (int, string) {
		req := map[string]any{"action": "credit_account", "account": "cust-rate", "usd_per_unit": rate, "note": "customer proved it"}
		if override != nil {
			req["override"] = override
		}
		s, body := e.Do("POST", "/v1/transfers/"+id+"/resolve", "finance", req)
		return s, string(body)
	}
	unchanged := func(step string) {
		t.Helper()
		if bal := e.Balance("cust-rate"); bal.AvailableUSD != "0.00" {
			t.Fatalf("%s: balance %+v, want nothing credited", step, bal)
		}
		for _, tr := range []views.Transfer{a, b} {
			if got := transferView(t, e, tr.ID); got.Resolution != nil || got.Unresolved != "1000000" {
				t.Fatalf("%s: transfer %s changed: %+v", step, tr.ID, got)
			}
			if ev := e.TransferEvents(tr.ID); slices.Contains(ev, "transfer.resolved") {
				t.Fatalf("%s: events %v", step, ev)
			}
		}
	}

	// Minutes later the current quote is the quote of the transfer's time:
	// a rate of 1e9 (5,000,000 USD of balance from 0.01 BTC) is refused.
	s, body := credit(a.ID, "1000000000", nil)
	if s != 400 || !strings.Contains(body, `"invalid_amount"`) || !strings.Contains(body, "50000") || !strings.Contains(body, "override") {
		t.Fatalf("rate 1e9: %d %s", s, body)
	}
	unchanged("rate 1e9")

	// Three days later, with no quote recorded near the transfer's time,
	// nothing confirms any rate: even today's quote needs an override.
	e.Clock.Advance(72 * time.Hour)
	if s, body = credit(a.ID, "50000", nil); s != 400 || !strings.Contains(body, "no BTC/USD quote") {
		t.Fatalf("no quote of the time: %d %s", s, body)
	}
	unchanged("no quote")
	// The quote of the transfer's time was 60,000: today's 50,000 is 16.7%
	// off it and refused; 60,500 (0.8% off) is credited, with its reference.
	if err := e.Store.RecordQuote(ctx, store.RateQuote{Symbol: "BTC", At: a.FirstSeenAt.Add(time.Minute), USDPerUnit: "60000", Sources: []string{"kraken"}}); err != nil {
		t.Fatal(err)
	}
	if s, body = credit(a.ID, "50000", nil); s != 400 || !strings.Contains(body, "60000") {
		t.Fatalf("today's rate for a past transfer: %d %s", s, body)
	}
	unchanged("today's rate")
	if s, body = credit(a.ID, "60500", nil); s != 200 {
		t.Fatalf("rate within the bound: %d %s", s, body)
	}
	got := transferView(t, e, a.ID)
	if r := got.Resolution; r == nil || r.AmountUSD != "605.00" || r.USDPerUnit != "60500" || r.ReferenceUSDPerUnit != "60000" || r.RateOverride {
		t.Fatalf("resolution %+v", got.Resolution)
	}

	// b: an override needs a reason, and credits at most 100.00 USD.
	if s, body = credit(b.ID, "1000000000", map[string]string{"reason": " "}); s != 400 || !strings.Contains(body, "reason") {
		t.Fatalf("override without a reason: %d %s", s, body)
	}
	if s, body = credit(b.ID, "1000000000", map[string]string{"reason": "agreed with the customer"}); s != 400 || !strings.Contains(body, "100.00") {
		t.Fatalf("override above the cap: %d %s", s, body)
	}
	if s, body = credit(b.ID, "10001", map[string]string{"reason": "agreed with the customer"}); s != 400 || !strings.Contains(body, "100.01") {
		t.Fatalf("override one cent above the cap: %d %s", s, body)
	}
	if bal := e.Balance("cust-rate"); bal.AvailableUSD != "605.00" {
		t.Fatalf("balance after refusals %+v", bal)
	}
	if ev := e.TransferEvents(b.ID); slices.Contains(ev, "transfer.resolved") {
		t.Fatalf("events of b after refusals %v", ev)
	}
	if s, body = credit(b.ID, "10000", map[string]string{"reason": "agreed with the customer"}); s != 200 {
		t.Fatalf("override at the cap: %d %s", s, body)
	}
	got = transferView(t, e, b.ID)
	if r := got.Resolution; r == nil || r.AmountUSD != "100.00" || !r.RateOverride || r.OverrideReason != "agreed with the customer" || r.ReferenceUSDPerUnit != "60000" {
		t.Fatalf("override resolution %+v", got.Resolution)
	}
	if bal := e.Balance("cust-rate"); bal.AvailableUSD != "705.00" {
		t.Fatalf("balance %+v", bal)
	}
	// The event says so, and the log.
	var data []byte
	if err := e.Store.Pool().QueryRow(ctx, `SELECT data FROM events WHERE transfer_id = $1 AND type = 'transfer.resolved'`, b.ID).Scan(&data); err != nil {
		t.Fatal(err)
	}
	var ev views.Transfer
	if err := json.Unmarshal(data, &ev); err != nil || ev.Resolution == nil || !ev.Resolution.RateOverride || ev.Resolution.USDPerUnit != "10000" {
		t.Fatalf("transfer.resolved body %s (%v)", data, err)
	}
	if l := logs.String(); !strings.Contains(l, "override") || !strings.Contains(l, b.ID) || !strings.Contains(l, "agreed with the customer") {
		t.Fatalf("no override log line:\n%s", l)
	}
}

// The daemon records the rate book's quotes (finance.RecordQuotes), so a
// decision days later has the quote of the transfer's time.
func TestRecordQuotesKeepsTheRateBooksQuotes(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Finance.RecordQuotes(ctx, []string{"BTC", "NOPE"}) }()
	deadline := time.Now().Add(10 * time.Second)
	var n int
	var rate string
	for time.Now().Before(deadline) {
		_ = e.Store.Pool().QueryRow(ctx, `SELECT count(*), coalesce(min(usd_per_unit::text), '') FROM rate_quotes WHERE symbol = 'BTC'`).Scan(&n, &rate)
		if n > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n != 1 || rate != "50000" {
		t.Fatalf("recorded %d BTC quotes at %q, want 1 at 50000", n, rate)
	}
}

// transferView is GET /v1/transfers/{id} as finance sees it.
func transferView(t *testing.T, e *paywatchtest.Env, id string) views.Transfer {
	t.Helper()
	s, body := e.Do("GET", "/v1/transfers/"+id, "finance", nil)
	if s != 200 {
		t.Fatalf("transfer %s: %d %s", id, s, body)
	}
	var v views.Transfer
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// RecordQuotes is timed by the finance service's clock, not the wall
// clock: while the clock stands still it records nothing more, and one
// interval later it records the book's new quote.
func TestRecordQuotesTicksOnTheServiceClock(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Finance.RecordQuotes(ctx, []string{"BTC"}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	count := func() (n int) {
		if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM rate_quotes WHERE symbol = 'BTC'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waiting := func() {
		t.Helper()
		wctx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		if err := e.Clock.BlockUntil(wctx, 1); err != nil {
			t.Fatalf("RecordQuotes does not wait on the clock: %v", err)
		}
	}
	waiting()
	if n := count(); n != 1 {
		t.Fatalf("%d quotes recorded at start, want 1", n)
	}
	e.Daemon.Quotes().Refresh(ctx) // a new quote, of a later time
	time.Sleep(50 * time.Millisecond)
	if n := count(); n != 1 {
		t.Fatalf("%d quotes recorded while the clock stood still, want 1", n)
	}
	e.Clock.Advance(finance.BoundsOf(e.Config).Window)
	deadline := time.Now().Add(10 * time.Second)
	for count() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d quotes recorded after the clock moved an interval, want 2", count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
