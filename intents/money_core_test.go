package intents_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/views"
)

// The broken sequences of issue 9 (items 1-5, 11) and issue 14 (item 1),
// each as its issue tells it, on real PostgreSQL.

func keyOf(t *testing.T, e *paywatchtest.Env, v views.Intent) []byte {
	t.Helper()
	n := payment.Network(v.Network)
	a, err := addresses.ParseAddress(n, e.Config.Networks[n].Chain, v.Address)
	if err != nil {
		t.Fatalf("parse %s: %v", v.Address, err)
	}
	return a.Key
}

// broadcast puts a payment to v in its chain's mempool (and the next block).
func broadcast(t *testing.T, e *paywatchtest.Env, f *chainstest.Fake, v views.Intent, amount *big.Int, label string) chains.Transfer {
	t.Helper()
	tr := chains.Transfer{TxID: chainstest.TxID(label), Asset: payment.Native, Key: keyOf(t, e, v), Address: v.Address, Amount: amount}
	f.Broadcast(tr)
	return tr
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func resolveTransfer(e *paywatchtest.Env, id string, req map[string]string) (int, []byte) {
	return e.Do("POST", "/v1/transfers/"+id+"/resolve", "finance", req)
}

func errCode(body []byte) (string, string) {
	var b struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(body, &b)
	return b.Error.Code, b.Error.Message
}

// Issue 9 item 1, as told: finance credits a late transfer with 1 of 2
// confirmations. credit_intent needs a confirmed transfer: refused, nothing
// changed, and the scanner goes on when it confirms.
func TestCreditIntentNeedsAConfirmedTransfer(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin))
	btc := payment.Bitcoin
	x := e.CreateIntent("order", "ORD-C1", "cust-c1", "100.00", "BTC")
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.Pay(x, payment.Native, paywatchtest.Units(x.AmountBaseUnits), "c1-late")
	e.Sync(btc)
	tr := e.Intent(x.ID).Transfers[0]
	if tr.Classification != "late" || tr.Confirmations != 1 {
		t.Fatalf("late transfer: %+v", tr)
	}
	before := e.Counts()
	status, body := resolveTransfer(e, tr.ID, map[string]string{"action": "credit_intent", "intent_id": x.ID, "note": "customer emailed"})
	code, msg := errCode(body)
	if status != 409 || code != "conflict" || !strings.Contains(msg, "confirm") {
		t.Fatalf("credit_intent of an unconfirmed transfer: %d %s", status, body)
	}
	if after := e.Counts(); !sameCounts(before, after) {
		t.Fatalf("a refused credit changed %v -> %v", before, after)
	}
	// The order is paid with another method, then T confirms: the scanner
	// goes on, T stays a late payment for finance.
	e.Sync(payment.Litecoin) // its scanner reports after the clock jump
	y := e.CreateIntent("order", "ORD-C1", "cust-c1", "100.00", "LTC")
	e.Pay(y, payment.Native, paywatchtest.Units(y.AmountBaseUnits), "c1-ltc")
	e.Chains[payment.Litecoin].Mine(5)
	e.Sync(payment.Litecoin)
	if got := e.Intent(y.ID); got.Status != "paid" {
		t.Fatalf("other intent: %s", got.Status)
	}
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	if got := e.Intent(x.ID); got.Status != "expired" || got.Transfers[0].Classification != "late" {
		t.Fatalf("after confirmation: %s %+v", got.Status, got.Transfers)
	}
}

func sameCounts(a, b map[string]int64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// Issue 9 item 1, the general path: a confirmed transfer credited to X pays
// it; a reorg puts it back in the mempool (X reverted, the order unpaid);
// the order is paid with another intent; the transfer is mined again. The
// payable is paid at most once, so the credited transfer becomes a
// duplicate, its credit is void and it is back in the finance inbox; no
// scan step fails.
func TestCreditedTransferOfAPayablePaidElsewhereIsAFinanceItem(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin))
	btc := payment.Bitcoin
	x := e.CreateIntent("order", "ORD-C2", "cust-c2", "100.00", "BTC")
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	late := e.Pay(x, payment.Native, paywatchtest.Units(x.AmountBaseUnits), "c2-late")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	tr := e.Intent(x.ID).Transfers[0]
	if status, body := resolveTransfer(e, tr.ID, map[string]string{"action": "credit_intent", "intent_id": x.ID, "note": "late by a minute"}); status != 200 {
		t.Fatalf("credit_intent: %d %s", status, body)
	}
	if got := e.Intent(x.ID); got.Status != "paid" {
		t.Fatalf("credited intent: %s", got.Status)
	}
	// The block leaves the chain and the transaction with it (a mempool
	// that kept it would keep it the payment in progress: the LTC payment
	// below would wait behind it, matcher.DecidePayable).
	e.Chains[btc].Reorg(2, 1, false)
	e.Sync(btc)
	if got := e.Intent(x.ID); got.Status != "reverted" {
		t.Fatalf("after the reorg: %s", got.Status)
	}
	e.Sync(payment.Litecoin) // its scanner reports after the clock jump
	y := e.CreateIntent("order", "ORD-C2", "cust-c2", "100.00", "LTC")
	e.Pay(y, payment.Native, paywatchtest.Units(y.AmountBaseUnits), "c2-ltc")
	e.Chains[payment.Litecoin].Mine(5)
	e.Sync(payment.Litecoin)
	if got := e.Intent(y.ID); got.Status != "paid" {
		t.Fatalf("other intent: %s", got.Status)
	}
	// The credited transfer is mined again and confirms.
	e.Chains[btc].Send(late.TxID, late.Index, late.Asset, late.Key, late.Address, late.Amount)
	e.Chains[btc].Mine(2)
	e.Sync(btc) // fails the test if a step fails

	// Its credit is void: uncredited, it is what its facts make it, late
	// (first seen after x's deadline), and a finance item again.
	got := e.Intent(x.ID)
	if got.Status == "paid" || got.Transfers[0].Classification != "late" || got.Transfers[0].Credited {
		t.Fatalf("credited transfer of a payable paid elsewhere: %s %+v", got.Status, got.Transfers[0])
	}
	status, body := e.Do("GET", "/v1/transfers?status=unresolved", "finance", nil)
	var page finance.InboxPage
	if err := json.Unmarshal(body, &page); status != 200 || err != nil {
		t.Fatalf("inbox: %d %s", status, body)
	}
	found := false
	for _, p := range page.Transfers {
		if p.ID == tr.ID {
			found = p.Classification == "late" && p.Resolution == nil
		}
	}
	if !found {
		t.Fatalf("transfer %s is not an unresolved late payment in the inbox: %s", tr.ID, body)
	}
	voided := e.Clock.Now()
	e.Clock.Advance(time.Minute)
	// Finance decides again, and the payable stays paid by Y.
	if status, body := resolveTransfer(e, tr.ID, map[string]string{"action": "refunded", "refund_txid": chainstest.TxID("refund-c2"), "note": "paid twice"}); status != 200 {
		t.Fatalf("refund: %d %s", status, body)
	}
	status, body = e.Do("GET", "/v1/payables/order/ORD-C2", "storefront", nil)
	if status != 200 || !strings.Contains(string(body), `"paid_by_intent":"`+y.ID+`"`) {
		t.Fatalf("payable: %d %s", status, body)
	}
	// The reconciliation lists the transfer once, with its live decision,
	// and as of an instant before the refund without one (its credit was
	// voided by then).
	e.Clock.Advance(time.Minute)
	for _, c := range []struct{ asOf, resolution string }{{"", "refunded"}, {voided.Format(time.RFC3339), ""}} {
		q := "/v1/reports/reconciliation?from=2026-11-01&to=2026-12-31&format=json"
		if c.asOf != "" {
			q += "&as_of=" + c.asOf
		}
		status, body := e.Do("GET", q, "finance", nil)
		var rep reports.Reconciliation
		if err := json.Unmarshal(body, &rep); status != 200 || err != nil {
			t.Fatalf("reconciliation: %d %s", status, body)
		}
		n := 0
		for _, r := range rep.Rows {
			if r.TransferID == tr.ID {
				n++
				if r.Resolution != c.resolution {
					t.Fatalf("as of %q: resolution %q, want %q", c.asOf, r.Resolution, c.resolution)
				}
			}
		}
		if n != 1 {
			t.Fatalf("as of %q: transfer %s in %d rows, want 1", c.asOf, tr.ID, n)
		}
	}
}

// Issue 9 item 2: P1 seen in the mempool at 14:05 pays a top-up; P2, never
// in the mempool, is mined in a block stamped 14:04. P2 is a duplicate; the
// intent stays paid and nothing is reversed.
func TestLaterPaymentStampedBeforeThePayerIsADuplicate(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	v := e.CreateIntent("topup", "TOPUP-S", "cust-s", "100.00", "BTC")
	start := e.Clock.Now()
	e.Clock.Set(start.Add(5 * time.Minute))
	broadcast(t, e, f, v, paywatchtest.Units(v.AmountBaseUnits), "s-p1")
	e.Sync(btc)
	f.Mine(2)
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("top-up: %s", got.Status)
	}
	e.Clock.Set(start.Add(4 * time.Minute)) // the block's time lags
	f.Send(chainstest.TxID("s-p2"), 0, payment.Native, keyOf(t, e, v), v.Address, paywatchtest.Units(v.AmountBaseUnits))
	f.Mine(1)
	e.Clock.Set(start.Add(10 * time.Minute))
	e.Sync(btc)
	got := e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 {
		t.Fatalf("after P2: %s %+v", got.Status, got.Transfers)
	}
	for _, tr := range got.Transfers {
		want := "settles"
		if tr.TxID == chainstest.TxID("s-p2") {
			want = "duplicate"
		}
		if string(tr.Classification) != want {
			t.Fatalf("transfer %s: %s, want %s", tr.TxID, tr.Classification, want)
		}
	}
	if types := e.CheckLedger("cust-s"); len(types) != 1 || types[0] != "credit" {
		t.Fatalf("ledger %v, want one credit", types)
	}
	if b := e.Balance("cust-s"); b.AvailableUSD != "100.00" {
		t.Fatalf("balance %+v", b)
	}
}

// Issue 9 item 3: credited 100.00, debited 100.00, reversed with 100.00
// unrecovered, mined again: the re-credit first settles what the reversal
// could not recover, and the balance ends at 0.00.
func TestRecreditAfterAnUnrecoveredReversalSettlesItFirst(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	v := e.CreateIntent("topup", "TOPUP-R", "cust-r", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "r-pay")
	f.Mine(1)
	e.Sync(btc)
	if b := e.Balance("cust-r"); b.AvailableUSD != "100.00" {
		t.Fatalf("credited balance %+v", b)
	}
	if status, body := e.Do("POST", "/v1/accounts/cust-r/debits", "storefront", map[string]string{"reference": "RENT-R", "amount_usd": "100.00"}); status != 201 {
		t.Fatalf("debit: %d %s", status, body)
	}
	f.Reorg(2, 1, true) // the payment goes back to the mempool
	e.Sync(btc)
	if b := e.Balance("cust-r"); b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "100.00" {
		t.Fatalf("after the reversal %+v", b)
	}
	f.Mine(2) // mined again, confirmed
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("re-mined: %s", got.Status)
	}
	b := e.Balance("cust-r")
	if b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "" {
		t.Fatalf("after the re-credit %+v, want 0.00 and nothing unrecovered", b)
	}
	types := e.CheckLedger("cust-r")
	if strings.Join(types, ",") != "credit,debit,reversal,credit,recovery" {
		t.Fatalf("ledger %v", types)
	}
	ev := e.IntentEvents(v.ID)
	if !contains(ev, "ledger.recovered") {
		t.Fatalf("events %v: no ledger.recovered", ev)
	}
	// The ledger page says what the recovery was for.
	status, body := e.Do("GET", "/v1/accounts/cust-r/ledger", "storefront", nil)
	var page finance.LedgerPage
	if err := json.Unmarshal(body, &page); status != 200 || err != nil || len(page.Entries) != 5 {
		t.Fatalf("ledger page: %d %s", status, body)
	}
	last := page.Entries[4]
	if last.Type != "recovery" || last.AmountUSD != "100.00" || last.BalanceAfterUSD != "0.00" || last.IntentID == nil || *last.IntentID != v.ID {
		t.Fatalf("recovery entry %+v", last)
	}
}

// The debt a reversal could not take back is the top-up's, not its
// intent's: credited 100.00 through one intent, debited 100.00, reversed
// with 100.00 unrecovered (the payment gone), then paid through another
// intent of the same top-up: that credit settles the debt first, and the
// balance ends at 0.00, not 100.00 (simulator seed 30866, 30-minute run:
// "top-up top-1 (500.00 USD) added 537.50 USD to the balance").
func TestRecreditThroughAnotherIntentSettlesTheTopupsDebt(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	first := e.CreateIntent("topup", "TOPUP-D", "cust-d", "100.00", "BTC")
	e.Pay(first, payment.Native, paywatchtest.Units(first.AmountBaseUnits), "d-pay")
	f.Mine(1)
	e.Sync(btc)
	if status, body := e.Do("POST", "/v1/accounts/cust-d/debits", "storefront", map[string]string{"reference": "RENT-D", "amount_usd": "100.00"}); status != 201 {
		t.Fatalf("debit: %d %s", status, body)
	}
	f.Reorg(2, 1, false) // the payment is gone for good
	e.Sync(btc)
	if b := e.Balance("cust-d"); b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "100.00" {
		t.Fatalf("after the reversal %+v", b)
	}
	second := e.CreateIntent("topup", "TOPUP-D", "cust-d", "100.00", "BTC")
	if second.ID == first.ID {
		t.Fatalf("the top-up's second creation answered its first intent %s", first.ID)
	}
	e.Pay(second, payment.Native, paywatchtest.Units(second.AmountBaseUnits), "d-pay-2")
	f.Mine(2)
	e.Sync(btc)
	if got := e.Intent(second.ID); got.Status != "paid" {
		t.Fatalf("second intent: %s", got.Status)
	}
	if b := e.Balance("cust-d"); b.AvailableUSD != "0.00" || b.UnrecoveredUSD != "" {
		t.Fatalf("after the second intent's credit %+v, want 0.00 and nothing unrecovered", b)
	}
	if types := e.CheckLedger("cust-d"); strings.Join(types, ",") != "credit,debit,reversal,credit,recovery" {
		t.Fatalf("ledger %v", types)
	}
}

// Issue 9 item 4: T1 (mempool) covers the order, T3 is a duplicate refunded
// by finance, then T1 vanishes. T3 never pays the order.
func TestRefundedDuplicateNeverPaysTheOrder(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-RF", "cust-rf", "100.00", "BTC")
	t1 := broadcast(t, e, f, v, paywatchtest.Units(v.AmountBaseUnits), "rf-t1")
	e.Sync(btc)
	e.Clock.Advance(time.Minute)
	broadcast(t, e, f, v, paywatchtest.Units(v.AmountBaseUnits), "rf-t3")
	e.Sync(btc)
	got := e.Intent(v.ID)
	if got.Status != "detected" || len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" {
		t.Fatalf("before the refund: %s %+v", got.Status, got.Transfers)
	}
	t3 := got.Transfers[1]
	if status, body := resolveTransfer(e, t3.ID, map[string]string{"action": "refunded", "refund_txid": chainstest.TxID("refund-rf"), "note": "sent twice"}); status != 200 {
		t.Fatalf("refund: %d %s", status, body)
	}
	f.Drop(t1.TxID)
	e.Sync(btc)
	f.Mine(2) // T3 is mined and confirmed
	e.Sync(btc)
	got = e.Intent(v.ID)
	if got.Status == "paid" || got.Status == "detected" {
		t.Fatalf("the refunded duplicate pays: %s %+v", got.Status, got.Transfers)
	}
	for _, tr := range got.Transfers {
		if tr.ID == t3.ID && tr.Classification != "duplicate" {
			t.Fatalf("refunded transfer is %s", tr.Classification)
		}
	}
	status, body := e.Do("GET", "/v1/payables/order/ORD-RF", "storefront", nil)
	if status != 200 || !strings.Contains(string(body), `"status":"unpaid"`) {
		t.Fatalf("payable: %d %s", status, body)
	}
}

// racyFake mines a block just before answering the mempool read, once
// armed: the block holding a pending payment lands between the scanner's
// tip read and its mempool read.
type racyFake struct {
	*chainstest.Fake
	armed atomic.Bool
	// lag makes Tip read that many blocks behind the chain (a node behind a
	// load balancer), while Block and Pending see the chain as it is.
	lag atomic.Int64
}

func (r *racyFake) Tip(ctx context.Context) (chains.Height, error) {
	t, err := r.Fake.Tip(ctx)
	return t - chains.Height(r.lag.Load()), err
}

func (r *racyFake) Pending(ctx context.Context, w chains.Watched) ([]chains.Transfer, error) {
	if r.armed.Swap(false) {
		r.Mine(1)
	}
	return r.Fake.Pending(ctx, w)
}

// Issue 9 item 5: a payment pending before the deadline is mined between
// the tip read and the mempool read after the deadline. It is not
// vanished: it stays on time and pays the intent.
func TestPaymentMinedBetweenTipAndMempoolReadStaysOnTime(t *testing.T) {
	var clk *clock.Fake
	f := chainstest.NewFake(func() time.Time {
		if clk == nil {
			return time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
		}
		return clk.Now()
	})
	racy := &racyFake{Fake: f}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, racy))
	clk = e.Clock
	btc := payment.Bitcoin
	v := e.CreateIntent("order", "ORD-RACE", "cust-race", "100.00", "BTC")
	e.Clock.Advance(20 * time.Minute)
	broadcast(t, e, f, v, paywatchtest.Units(v.AmountBaseUnits), "race")
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "detected" {
		t.Fatalf("pending payment: %s", got.Status)
	}
	e.Clock.Advance(11 * time.Minute) // past the deadline
	racy.armed.Store(true)
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "detected" || got.Transfers[0].Status == "orphaned" {
		t.Fatalf("after the race: %s %+v", got.Status, got.Transfers)
	}
	f.Mine(1)
	e.Sync(btc)
	got := e.Intent(v.ID)
	if got.Status != "paid" || got.Transfers[0].Classification != "settles" || got.Late {
		t.Fatalf("confirmed: %s late=%v %+v", got.Status, got.Late, got.Transfers)
	}
	for _, typ := range e.IntentEvents(v.ID) {
		if typ == "intent.expired" || typ == "intent.awaiting_payment" {
			t.Fatalf("events %v: the payment never vanished", e.IntentEvents(v.ID))
		}
	}
}

// Issue 9 item 11: credit_account refuses an unconfirmed transfer.
func TestCreditAccountRefusesAnUnconfirmedTransfer(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc := payment.Bitcoin
	v := e.CreateIntent("order", "ORD-CA", "cust-ca", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "ca-pay")
	e.Chains[btc].Mine(1)
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "ca-dup") // 1 of 2 confirmations
	e.Sync(btc)
	dup := e.Intent(v.ID).Transfers[1]
	if dup.Classification != "duplicate" || dup.Status != "confirming" {
		t.Fatalf("duplicate: %+v", dup)
	}
	before := e.Counts()
	status, body := resolveTransfer(e, dup.ID, map[string]string{"action": "credit_account", "account": "cust-ca", "note": "to balance"})
	code, msg := errCode(body)
	if status != 409 || code != "conflict" || !strings.Contains(msg, "confirm") {
		t.Fatalf("credit_account of an unconfirmed transfer: %d %s", status, body)
	}
	if after := e.Counts(); !sameCounts(before, after) {
		t.Fatalf("a refused credit changed %v -> %v", before, after)
	}
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	if status, body := resolveTransfer(e, dup.ID, map[string]string{"action": "credit_account", "account": "cust-ca", "note": "to balance"}); status != 200 {
		t.Fatalf("credit_account once confirmed: %d %s", status, body)
	}
}

// Issue 14 item 1: a balance debit for an order whose crypto payment is
// detected and covers it is refused; the intent is paid when it confirms
// and never announces a vanished payment.
func TestDebitRefusedWhileACryptoPaymentIsInProgress(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc := payment.Bitcoin
	top := e.CreateIntent("topup", "TOPUP-P", "cust-p", "500.00", "BTC")
	e.Pay(top, payment.Native, paywatchtest.Units(top.AmountBaseUnits), "p-top")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	v := e.CreateIntent("order", "ORD-P", "cust-p", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "p-order") // 1 of 2
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "detected" {
		t.Fatalf("order intent: %s", got.Status)
	}
	before := e.Counts()
	status, body := e.Do("POST", "/v1/accounts/cust-p/debits", "storefront", map[string]string{"reference": "ORD-P", "amount_usd": "100.00"})
	code, msg := errCode(body)
	if status != 409 || code != "payment_in_progress" || !strings.Contains(msg, v.ID) {
		t.Fatalf("debit during a detected payment: %d %s", status, body)
	}
	if after := e.Counts(); !sameCounts(before, after) {
		t.Fatalf("a refused debit changed %v -> %v", before, after)
	}
	if b := e.Balance("cust-p"); b.AvailableUSD != "500.00" {
		t.Fatalf("balance %+v", b)
	}
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("order intent: %s", got.Status)
	}
	if ev := e.IntentEvents(v.ID); contains(ev, "intent.awaiting_payment") {
		t.Fatalf("events %v", ev)
	}
}

// Issue 14 item 1, the other way to the same false event: the order is
// paid by another intent while this one's payment is detected. Its payment
// is a duplicate for finance; the intent does not say it vanished.
func TestDetectedIntentOfAPayablePaidElsewhereDoesNotAnnounceAVanishedPayment(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin))
	btc := payment.Bitcoin
	x := e.CreateIntent("order", "ORD-PE", "cust-pe", "100.00", "BTC")
	y := e.CreateIntent("order", "ORD-PE", "cust-pe", "100.00", "LTC")
	// A partial payment of x (a complete one in progress would hold y's
	// behind it, matcher.DecidePayable).
	e.Pay(x, payment.Native, new(big.Int).Div(paywatchtest.Units(x.AmountBaseUnits), big.NewInt(2)), "pe-btc")
	e.Sync(btc)
	e.Pay(y, payment.Native, paywatchtest.Units(y.AmountBaseUnits), "pe-ltc")
	e.Chains[payment.Litecoin].Mine(5)
	e.Sync(payment.Litecoin)
	if got := e.Intent(y.ID); got.Status != "paid" {
		t.Fatalf("LTC intent: %s", got.Status)
	}
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	got := e.Intent(x.ID)
	if got.Status != "detected" || got.Transfers[0].Classification != "duplicate" {
		t.Fatalf("BTC intent: %s %+v", got.Status, got.Transfers)
	}
	if ev := e.IntentEvents(x.ID); contains(ev, "intent.awaiting_payment") || !contains(ev, "transfer.unmatched") {
		t.Fatalf("events %v", ev)
	}
	// At the deadline it expires like any intent of a paid payable.
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.Intent(x.ID); got.Status != "expired" {
		t.Fatalf("after the deadline: %s", got.Status)
	}
}

// Issue 9 item 5 with a node whose tip lags its own mempool (found by the
// simulator, sim-findings F5): the payment left the mempool for a block
// above the tip the node reports. It is not vanished.
func TestPaymentMinedAboveALaggingTipIsNotVanished(t *testing.T) {
	f := chainstest.NewFake(func() time.Time { return time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC) })
	racy := &racyFake{Fake: f}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, racy))
	btc := payment.Bitcoin
	v := e.CreateIntent("order", "ORD-LAG", "cust-lag", "100.00", "BTC")
	broadcast(t, e, f, v, paywatchtest.Units(v.AmountBaseUnits), "lag")
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "detected" {
		t.Fatalf("pending payment: %s", got.Status)
	}
	racy.lag.Store(1)
	f.Mine(1) // the payment's block; the node's tip still reads the one before
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "detected" || got.Transfers[0].Status == "orphaned" {
		t.Fatalf("with a lagging tip: %s %+v", got.Status, got.Transfers)
	}
	racy.lag.Store(0)
	f.Mine(1)
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("confirmed: %s %+v", got.Status, got.Transfers)
	}
	if ev := e.IntentEvents(v.ID); contains(ev, "intent.awaiting_payment") {
		t.Fatalf("events %v: the payment never vanished", ev)
	}
}

// Found by the simulator (sim-findings F6): a rescan replays the blocks of
// a paid top-up while the node reports a lower tip (a load balancer, a
// resync). Re-applying a block with the same hash must keep its confirmed
// transfers confirmed: no reversal, no second credit.
func TestReplayedBlockKeepsAConfirmedTransferConfirmed(t *testing.T) {
	f := chainstest.NewFake(func() time.Time { return time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC) })
	racy := &racyFake{Fake: f}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, racy))
	btc := payment.Bitcoin
	f.Mine(1)
	e.Sync(btc)
	v := e.CreateIntent("topup", "TOPUP-RS", "cust-rs", "100.00", "BTC")
	f.Send(chainstest.TxID("rs"), 0, payment.Native, keyOf(t, e, v), v.Address, paywatchtest.Units(v.AmountBaseUnits))
	f.Mine(2)
	e.Sync(btc)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("top-up: %s", got.Status)
	}
	if status, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int{"from_height": 1}); status != 202 {
		t.Fatalf("rescan: %d %s", status, body)
	}
	racy.lag.Store(1) // the node reports the payment's block as its tip
	e.Sync(btc)
	racy.lag.Store(0)
	e.Sync(btc)
	got := e.Intent(v.ID)
	if got.Status != "paid" {
		t.Fatalf("after the rescan: %s", got.Status)
	}
	if ev := e.IntentEvents(v.ID); contains(ev, "intent.reverted") {
		t.Fatalf("events %v", ev)
	}
	if types := e.CheckLedger("cust-rs"); len(types) != 1 {
		t.Fatalf("ledger %v, want one credit", types)
	}
}

// Found by the simulator (seed 9): finance refunds a partial payment of an
// intent still waiting for the rest; the refunded part stops counting and
// the intent announces a vanished payment that is still in the mempool. A
// partial payment in progress is not a finance item yet: refused.
func TestPartialPaymentInProgressIsNotResolvable(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	btc, f := payment.Bitcoin, e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-PP", "cust-pp", "100.00", "BTC")
	broadcast(t, e, f, v, big.NewInt(1000), "pp-part")
	e.Sync(btc)
	got := e.Intent(v.ID)
	if got.Status != "detected" || got.Transfers[0].Classification != "partial" {
		t.Fatalf("partial payment: %s %+v", got.Status, got.Transfers)
	}
	before := e.Counts()
	status, body := resolveTransfer(e, got.Transfers[0].ID, map[string]string{"action": "refunded",
		"refund_txid": chainstest.TxID("refund-pp"), "note": "customer asked"})
	if code, msg := errCode(body); status != 409 || code != "conflict" || !strings.Contains(msg, v.ID) {
		t.Fatalf("resolving a partial payment in progress: %d %s", status, body)
	}
	if after := e.Counts(); !sameCounts(before, after) {
		t.Fatalf("a refused resolution changed %v -> %v", before, after)
	}
	e.Sync(btc)
	if ev := e.IntentEvents(v.ID); contains(ev, "intent.awaiting_payment") {
		t.Fatalf("events %v", ev)
	}
	// Once the intent stops waiting (underpaid at the deadline), it is.
	f.Mine(2)
	e.Clock.Advance(31 * time.Minute)
	e.Sync(btc)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.Intent(v.ID); got.Status != "underpaid" {
		t.Fatalf("at the deadline: %s", got.Status)
	}
	if status, body := resolveTransfer(e, got.Transfers[0].ID, map[string]string{"action": "refunded",
		"refund_txid": chainstest.TxID("refund-pp"), "note": "customer asked"}); status != 200 {
		t.Fatalf("refund once underpaid: %d %s", status, body)
	}
}

// Found by the simulator (seed 1360, "a full rescan reproduces the same
// state"): when a payable becomes paid, its other intents are decided again
// in the same transaction. Half a payment to the BTC intent is a partial
// while the order waits; once the LTC intent pays the order it is a
// duplicate of a paid payable, in the finance inbox at once, not only when
// something next touches the BTC intent (which a rescan would do, giving a
// different answer for the same chain).
func TestPartialOfAnotherIntentBecomesADuplicateWhenThePayableIsPaid(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin))
	btc, ltc := payment.Bitcoin, payment.Litecoin
	x := e.CreateIntent("topup", "TOP-SIB", "cust-sib", "100.00", "BTC")
	y := e.CreateIntent("topup", "TOP-SIB", "cust-sib", "100.00", "LTC")
	half := new(big.Int).Quo(paywatchtest.Units(x.AmountBaseUnits), big.NewInt(2))
	e.Pay(x, payment.Native, half, "sib-btc")
	e.Chains[btc].Mine(2)
	e.Sync(btc)
	if got := e.Intent(x.ID); got.Status != "detected" || got.Transfers[0].Classification != "partial" {
		t.Fatalf("BTC intent before: %s %+v", got.Status, got.Transfers)
	}
	e.Pay(y, payment.Native, paywatchtest.Units(y.AmountBaseUnits), "sib-ltc")
	e.Chains[ltc].Mine(5)
	e.Sync(ltc) // only Litecoin is scanned: nothing touches the BTC intent itself
	if got := e.Intent(y.ID); got.Status != "paid" {
		t.Fatalf("LTC intent: %s", got.Status)
	}
	got := e.Intent(x.ID)
	if got.Transfers[0].Classification != "duplicate" {
		t.Fatalf("BTC intent after the payable was paid: %s %+v, want its transfer a duplicate", got.Status, got.Transfers)
	}
	if ev := e.IntentEvents(x.ID); !contains(ev, "transfer.unmatched") || contains(ev, "intent.awaiting_payment") {
		t.Fatalf("BTC intent events %v: want the duplicate announced to finance", ev)
	}
	// Scanning Bitcoin again changes nothing: the answer no longer depends
	// on which chain was read last.
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	if again := e.Intent(x.ID); again.Status != got.Status || again.Transfers[0].Classification != "duplicate" {
		t.Fatalf("after a Bitcoin scan: %s %+v, want %s duplicate", again.Status, again.Transfers, got.Status)
	}
}
