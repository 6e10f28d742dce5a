package api_test

import (
	"context"
	"maps"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// Issue 32 item 5: a rate lock ends at the intent's deadline. A BTC order
// locked at 50,000 expires; 60 days later its old amount arrives while
// BTC is at 20,000. credit_account values the late transfer at the quote
// of its own time (usd_per_unit within the bound of it, or that quote
// itself), never at the expired lock, and a usd_per_unit sent is never
// silently replaced. Issue 34 item 4: a usd_per_unit sent for a transfer
// whose rate is locked (it came by the deadline) is refused naming the
// field, and nothing changes.
func TestCreditAccountOfALateTransferTakesTheQuoteOfItsTime(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	btc := payment.Bitcoin
	in := e.CreateIntent("order", "ORD-LATE-60D", "", "500.00", "BTC")
	if in.AmountBaseUnits != "1000000" {
		t.Fatalf("500.00 USD at 50,000 is %s sat, want 1000000", in.AmountBaseUnits)
	}
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.Intent(in.ID); got.Status != "expired" {
		t.Fatalf("intent %s, want expired", got.Status)
	}
	// 60 days later BTC is at 20,000: the quote of the payments' time.
	e.Clock.Advance(60 * 24 * time.Hour)
	if err := e.Store.RecordQuote(ctx, store.RateQuote{Symbol: "BTC", At: e.Clock.Now(), USDPerUnit: "20000", Sources: []string{"kraken"}}); err != nil {
		t.Fatal(err)
	}
	e.Pay(in, payment.Native, paywatchtest.Units(in.AmountBaseUnits), "late-60d-a")
	e.Pay(in, payment.Native, paywatchtest.Units(in.AmountBaseUnits), "late-60d-b")
	e.Chains[btc].Mine(6)
	e.Sync(btc)
	p := inbox(t, e, "classification=late")
	if len(p.Transfers) != 2 {
		t.Fatalf("late inbox %+v", p.Transfers)
	}
	a, b := p.Transfers[0], p.Transfers[1]
	for _, tr := range p.Transfers {
		if tr.Status != "confirmed" {
			t.Fatalf("transfer %s is %s, want confirmed", tr.ID, tr.Status)
		}
	}
	credit := func(id, account, rate string) (int, []byte) {
		req := map[string]any{"action": "credit_account", "account": account, "note": "late by 60 days"}
		if rate != "" {
			req["usd_per_unit"] = rate
		}
		return resolve(e, id, "finance", req)
	}

	// The expired lock's 50,000 is 150% off the quote of the time: refused.
	if s, body := credit(a.ID, "cust-late", "50000"); s != 400 || apiCode(body) != "invalid_amount" || !strings.Contains(string(body), "20000") {
		t.Fatalf("the expired lock's rate: %d %s", s, body)
	}
	if bal := e.Balance("cust-late"); bal.AvailableUSD != "0.00" {
		t.Fatalf("refused credit changed the balance: %+v", bal)
	}
	// The rate finance sends, within the bound, is the rate credited.
	s, body := credit(a.ID, "cust-late", "20000")
	if s != 200 {
		t.Fatalf("credit at the quote of its time: %d %s", s, body)
	}
	got := transferView(t, e, a.ID)
	if r := got.Resolution; r == nil || r.AmountUSD != "200.00" || r.USDPerUnit != "20000" || r.ReferenceUSDPerUnit != "20000" || r.RateOverride {
		t.Fatalf("late credit resolution %+v, want 200.00 at 20000", got.Resolution)
	}
	// Without usd_per_unit: the quote of its time, not the lock nor today's.
	if s, body = credit(b.ID, "cust-late-b", ""); s != 200 {
		t.Fatalf("credit at the quote of its time (none sent): %d %s", s, body)
	}
	got = transferView(t, e, b.ID)
	if r := got.Resolution; r == nil || r.AmountUSD != "200.00" || r.USDPerUnit != "20000" {
		t.Fatalf("late credit without a rate: %+v, want 200.00 at 20000", got.Resolution)
	}
	if bal := e.Balance("cust-late"); bal.AvailableUSD != "200.00" {
		t.Fatalf("balance %+v", bal)
	}

	// On time, the rate is locked: a usd_per_unit is refused naming the
	// field, with or without an override, and nothing changes; without it
	// the surplus is credited at the lock.
	over := e.CreateIntent("order", "ORD-OVER-LOCK", "", "100.00", "BTC")
	e.Pay(over, payment.Native, new(big.Int).Add(paywatchtest.Units(over.AmountBaseUnits), big.NewInt(10_000)), "over-lock")
	e.Chains[btc].Mine(6)
	e.Sync(btc)
	surplus := onlyTransfer(t, e, "overpaid")
	counts := e.Counts()
	for _, req := range []map[string]any{
		{"action": "credit_account", "account": "cust-over", "note": "surplus", "usd_per_unit": "50000"},
		{"action": "credit_account", "account": "cust-over", "note": "surplus", "usd_per_unit": "20000"},
		{"action": "credit_account", "account": "cust-over", "note": "surplus", "usd_per_unit": "20000", "override": map[string]string{"reason": "customer asked"}},
	} {
		s, body := resolve(e, surplus.ID, "finance", req)
		if s != 400 || apiCode(body) != "invalid_request" || !strings.Contains(string(body), "usd_per_unit") || !strings.Contains(string(body), "locked") {
			t.Fatalf("usd_per_unit %v on a locked rate: %d %s", req["usd_per_unit"], s, body)
		}
	}
	if after := e.Counts(); !maps.Equal(counts, after) {
		t.Fatalf("refusals changed rows: %v -> %v", counts, after)
	}
	if s, body := resolve(e, surplus.ID, "finance", map[string]any{"action": "credit_account", "account": "cust-over", "note": "surplus"}); s != 200 {
		t.Fatalf("surplus at the lock: %d %s", s, body)
	}
	if bal := e.Balance("cust-over"); bal.AvailableUSD != "5.00" {
		t.Fatalf("surplus of 10,000 sat at the lock of 50,000: %+v, want 5.00", bal)
	}
}
