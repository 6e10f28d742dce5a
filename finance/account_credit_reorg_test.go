package finance_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Sim finding F8: a credit_account credit stands only while its transfer is
// on the chain. A reorg that removes the transfer reverses the credit
// (ledger.reversed, unrecovered when spent); the transfer mined again and
// confirmed is credited again, once, settling the unrecovered rest first.

// creditedDuplicate pays order ref twice, confirms the second payment (a
// duplicate) and has finance credit it to account. It returns the intent
// and the duplicate's view.
func creditedDuplicate(t *testing.T, e *paywatchtest.Env, ref, account, label string) (views.Intent, views.Transfer) {
	t.Helper()
	btc := payment.Bitcoin
	v := e.CreateIntent("order", ref, account, "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), label+"-pay")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), label+"-dup")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	got := e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" || got.Transfers[1].Status != "confirmed" {
		t.Fatalf("before the credit: %s %+v", got.Status, got.Transfers)
	}
	dup := got.Transfers[1]
	if status, body := resolveTransfer(e, dup.ID, map[string]string{"action": "credit_account", "account": account, "note": "paid twice, keep it as balance"}); status != 200 {
		t.Fatalf("credit_account: %d %s", status, body)
	}
	if b := e.Balance(account); b.AvailableUSD != "100.00" {
		t.Fatalf("credited balance %+v", b)
	}
	return v, dup
}

func TestAccountCreditOfATransferThatLeavesTheChainIsReversedAndComesBack(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	v, dup := creditedDuplicate(t, e, "ORD-F8", "cust-f8", "f8")

	// The duplicate's block (and the one above) are replaced; the
	// transaction is gone (not back in the mempool).
	f.Reorg(2, 1, false)
	e.Sync(btc)
	e.Sync(btc) // a replay changes nothing
	if got := e.Intent(v.ID); got.Status != "paid" || got.Transfers[1].Status != "orphaned" {
		t.Fatalf("after the reorg: %s %+v", got.Status, got.Transfers)
	}
	if b := e.Balance("cust-f8"); b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "" {
		t.Fatalf("after the reorg %+v, want 0.00", b)
	}
	if types := e.CheckLedger("cust-f8"); strings.Join(types, ",") != "credit,reversal" {
		t.Fatalf("ledger %v", types)
	}
	ev := e.TransferEvents(dup.ID)
	if !contains(ev, "ledger.reversed") {
		t.Fatalf("events of %s: %v, no ledger.reversed", dup.ID, ev)
	}
	if r := ledgerPage(t, e, "cust-f8").Entries[1]; r.Type != "reversal" || r.AmountUSD != "100.00" || r.TransferID == nil || *r.TransferID != dup.ID {
		t.Fatalf("reversal entry %+v", r)
	}
	// The decision stands (history); the orphaned transfer counts in no sum.
	tr := transferView(t, e, dup.ID)
	if tr.Resolution == nil || tr.Resolution.Action != "credit_account" {
		t.Fatalf("resolution after the reorg: %+v", tr.Resolution)
	}
	checkRecon(t, e, dup.ID, true)

	// A rescan from below replays the chain: nothing is reversed twice.
	if status, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int{"from_height": 1}); status != 202 {
		t.Fatalf("rescan: %d %s", status, body)
	}
	e.Sync(btc)
	if types := e.CheckLedger("cust-f8"); strings.Join(types, ",") != "credit,reversal" {
		t.Fatalf("ledger after a rescan %v", types)
	}

	// The same transaction is mined again and confirmed: the credit stands
	// again, once.
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "f8-dup")
	e.Sync(btc)
	if b := e.Balance("cust-f8"); b.AvailableUSD != "0.00" {
		t.Fatalf("re-mined, 1 of 2 confirmations %+v: credited before it is confirmed", b)
	}
	f.Mine(1)
	e.Sync(btc)
	e.Sync(btc)
	if got := transferView(t, e, dup.ID); got.Status != "confirmed" || got.Resolution == nil || got.Resolution.Action != "credit_account" {
		t.Fatalf("re-mined transfer %+v", got)
	}
	if b := e.Balance("cust-f8"); b.AvailableUSD != "100.00" {
		t.Fatalf("re-confirmed %+v, want 100.00", b)
	}
	if types := e.CheckLedger("cust-f8"); strings.Join(types, ",") != "credit,reversal,credit" {
		t.Fatalf("ledger %v", types)
	}
	if ev := e.TransferEvents(dup.ID); strings.Count(strings.Join(ev, ","), "ledger.credited") != 2 {
		t.Fatalf("events of %s: %v, want two ledger.credited", dup.ID, ev)
	}
	checkRecon(t, e, dup.ID, false)
}

func TestSpentAccountCreditOfATransferThatLeavesTheChainIsUnrecoveredThenRecovered(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	_, dup := creditedDuplicate(t, e, "ORD-F8S", "cust-f8s", "f8s")
	if status, body := e.Do("POST", "/v1/accounts/cust-f8s/debits", "storefront", map[string]string{"reference": "RENT-F8", "amount_usd": "100.00"}); status != 201 {
		t.Fatalf("debit: %d %s", status, body)
	}
	f.Reorg(2, 1, true) // the duplicate goes back to the mempool
	e.Sync(btc)
	if b := e.Balance("cust-f8s"); b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "100.00" {
		t.Fatalf("after the reversal %+v, want 0.00 and 100.00 unrecovered", b)
	}
	if types := e.CheckLedger("cust-f8s"); strings.Join(types, ",") != "credit,debit,reversal" {
		t.Fatalf("ledger %v", types)
	}
	if r := ledgerPage(t, e, "cust-f8s").Entries[2]; r.Type != "reversal" || r.UnrecoveredUSD != "100.00" {
		t.Fatalf("reversal entry %+v", r)
	}
	f.Mine(2) // mined again, confirmed
	e.Sync(btc)
	e.Sync(btc)
	b := e.Balance("cust-f8s")
	if b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "" {
		t.Fatalf("after the re-credit %+v, want 0.00 and nothing unrecovered", b)
	}
	if types := e.CheckLedger("cust-f8s"); strings.Join(types, ",") != "credit,debit,reversal,credit,recovery" {
		t.Fatalf("ledger %v", types)
	}
	ev := e.TransferEvents(dup.ID)
	if !contains(ev, "ledger.reversed") || !contains(ev, "ledger.recovered") {
		t.Fatalf("events of %s: %v", dup.ID, ev)
	}
	last := ledgerPage(t, e, "cust-f8s").Entries[4]
	if last.Type != "recovery" || last.AmountUSD != "100.00" || last.TransferID == nil || *last.TransferID != dup.ID {
		t.Fatalf("recovery entry %+v", last)
	}
}

func ledgerPage(t *testing.T, e *paywatchtest.Env, account string) finance.LedgerPage {
	t.Helper()
	page, err := e.Finance.Ledger(context.Background(), "", account, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func transferView(t *testing.T, e *paywatchtest.Env, id string) views.Transfer {
	t.Helper()
	page, err := e.Finance.Inbox(context.Background(), store.InboxFilter{Status: "all", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range page.Transfers {
		if tr.ID == id {
			return tr
		}
	}
	t.Fatalf("transfer %s not in the inbox", id)
	return views.Transfer{}
}

// checkRecon asserts total = settled + unresolved + resolved per method and
// whether the transfer is excluded.
func checkRecon(t *testing.T, e *paywatchtest.Env, transferID string, excluded bool) {
	t.Helper()
	rep, err := e.Reports.Reconcile(context.Background(), "", time.Unix(0, 0), e.Clock.Now().Add(time.Hour), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rep.Rows {
		if r.TransferID == transferID {
			found = true
			if r.Excluded != excluded || r.Resolution != "credit_account" {
				t.Fatalf("reconciliation row %+v, want excluded=%v, credit_account", r, excluded)
			}
		}
	}
	if !found {
		t.Fatalf("transfer %s not in the reconciliation", transferID)
	}
	for _, m := range rep.Totals {
		p := func(s string) *big.Int { v, _ := new(big.Int).SetString(s, 10); return v }
		sum := new(big.Int).Add(p(m.Settled), p(m.Unresolved))
		if sum.Add(sum, p(m.Resolved)).Cmp(p(m.Total)) != 0 {
			t.Fatalf("%s: total %s != settled %s + unresolved %s + resolved %s", m.Method, m.Total, m.Settled, m.Unresolved, m.Resolved)
		}
	}
}
