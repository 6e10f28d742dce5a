package intents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// The broken sequences of issue 21: round trips (blocks taken away by a
// reorg, then the same transactions mined again) and resolutions that cover
// part of a transfer. Each is told as the issue tells it, on real
// PostgreSQL and the scripted chain.

// smallDepths makes Ethereum confirm at 2 blocks with a safety depth of 6,
// so that a round trip of a few blocks stays within it.
func smallDepths(c *config.Config) {
	two := 2
	for _, m := range []payment.Method{payment.ETH, payment.USDTERC20, payment.USDCERC20, payment.LTC} {
		c.Methods[m].Confirmations = &two
	}
	for _, n := range []payment.Network{payment.Ethereum, payment.Bitcoin, payment.Litecoin} {
		c.Networks[n].SafetyDepth = 6
	}
}

// pct returns p percent of base units s.
func pct(s string, p int64) *big.Int {
	v := paywatchtest.Units(s)
	v.Mul(v, big.NewInt(p))
	return v.Div(v, big.NewInt(100))
}

// send queues a transfer to v's address for the next block of its chain.
func send(t *testing.T, e *paywatchtest.Env, v views.Intent, amount *big.Int, label string) chains.Transfer {
	t.Helper()
	f := e.Chains[payment.Network(v.Network)]
	m, _ := payment.LookupMethod(payment.Method(v.Method))
	return f.Send(chainstest.TxID(label), 0, m.Asset, keyOf(t, e, v), v.Address, amount)
}

// lastBlocks returns the transfers of the chain's last depth blocks, one
// slice per block, in height order.
func lastBlocks(f *chainstest.Fake, depth int) [][]chains.Transfer {
	c := f.Chain()
	var out [][]chains.Transfer
	for _, b := range c[len(c)-depth:] {
		out = append(out, b.Transfers)
	}
	return out
}

// reorgTo replaces the chain's last depth blocks by blocks holding the
// given transfers and scans the network.
func reorgTo(e *paywatchtest.Env, n payment.Network, depth int, blocks [][]chains.Transfer) {
	e.Chains[n].ReorgTo(depth, blocks)
	e.Sync(n)
}

// books is what a round trip must give back (issue 21): the intent's
// status, received and paid_at; each transfer's classification, intent and
// status; the account's available and pending balance; the unresolved
// inbox; the reconciliation's sums. A transfer's confirmations are not in
// it: a chain that gave the blocks back is longer than before.
type books struct {
	Status, Received            string
	PaidAt                      *time.Time
	Overpaid, Late              bool
	Transfers                   map[string]string
	Available, Pending          string
	Inbox                       map[string]bool
	Settled, Unresolved, Resolv string
}

func booksOf(t *testing.T, e *paywatchtest.Env, id, account, method string) books {
	t.Helper()
	v := e.Intent(id)
	b := books{Status: string(v.Status), Received: v.ReceivedBaseUnits, PaidAt: v.PaidAt, Overpaid: v.Overpaid, Late: v.Late,
		Transfers: map[string]string{}, Inbox: inbox(t, e)}
	for _, tr := range v.Transfers {
		in := ""
		if tr.IntentID != nil {
			in = *tr.IntentID
		}
		b.Transfers[tr.TxID] = string(tr.Classification) + " " + in + " " + string(tr.Status)
	}
	if account != "" {
		bal := e.Balance(account)
		b.Available, b.Pending = bal.AvailableUSD, bal.PendingUSD
	}
	b.Settled, b.Unresolved, b.Resolv = recon(t, e, method)
	return b
}

func sameBooks(t *testing.T, what string, before, after books) {
	t.Helper()
	if !reflect.DeepEqual(before, after) {
		bj, _ := json.MarshalIndent(before, "", " ")
		aj, _ := json.MarshalIndent(after, "", " ")
		t.Fatalf("%s: the books did not come back\nbefore: %s\nafter:  %s", what, bj, aj)
	}
}

// roundTrip takes the chain's last depth blocks away (a longer branch of
// empty blocks wins), scans, calls between, then mines the same blocks back
// (a branch longer again) and scans: the same transactions at the same
// heights.
func roundTrip(e *paywatchtest.Env, n payment.Network, depth int, between func()) {
	f := e.Chains[n]
	blocks := lastBlocks(f, depth)
	f.ReorgTo(depth, make([][]chains.Transfer, depth+1))
	e.Sync(n)
	if between != nil {
		between()
	}
	f.ReorgTo(depth+1, append(blocks, nil, nil))
	e.Sync(n)
}

// resolveOK resolves a transfer and fails the test unless it is 200.
func resolveOK(t *testing.T, e *paywatchtest.Env, id string, req map[string]string) views.Transfer {
	t.Helper()
	status, body := resolveTransfer(e, id, req)
	if status != 200 {
		t.Fatalf("resolve %s %v: %d %s", id, req, status, body)
	}
	var v views.Transfer
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// inbox returns the ids of the unresolved finance inbox.
func inbox(t *testing.T, e *paywatchtest.Env) map[string]bool {
	t.Helper()
	status, body := e.Do("GET", "/v1/transfers?status=unresolved", "finance", nil)
	if status != 200 {
		t.Fatalf("inbox: %d %s", status, body)
	}
	var p finance.InboxPage
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tr := range p.Transfers {
		out[tr.ID] = true
	}
	return out
}

// recon returns one method's reconciliation totals (base units).
func recon(t *testing.T, e *paywatchtest.Env, method string) (settled, unresolved, resolved string) {
	t.Helper()
	rep, err := e.Reports.Reconcile(context.Background(), "", time.Unix(0, 0), e.Clock.Now().Add(time.Hour), e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Totals {
		if m.Method == method {
			return m.Settled, m.Unresolved, m.Resolved
		}
	}
	t.Fatalf("no reconciliation totals for %s", method)
	return
}

func transferOf(t *testing.T, v views.Intent, txid string) views.Transfer {
	t.Helper()
	for _, tr := range v.Transfers {
		if tr.TxID == txid {
			return tr
		}
	}
	t.Fatalf("intent %s has no transfer %s: %+v", v.ID, txid, v.Transfers)
	return views.Transfer{}
}

// Issue 21 item 1: a top-up paid 110 %, its surplus credited to the account
// by finance; the block is reorged out and the same transaction is mined
// again. The books come back: paid, credited again, 110.00.
func TestResolvedOverpaymentPaysAgainAfterARoundTrip(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	eth := payment.Ethereum
	x := e.CreateIntent("topup", "TOP-RT1", "cust-rt1", "100.00", "ETH")
	tr := send(t, e, x, pct(x.AmountBaseUnits, 110), "rt1")
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	if v := e.Intent(x.ID); v.Status != "paid" || !v.Overpaid {
		t.Fatalf("after payment: %s overpaid=%v", v.Status, v.Overpaid)
	}
	id := transferOf(t, e.Intent(x.ID), tr.TxID).ID
	resolveOK(t, e, id, map[string]string{"action": "credit_account", "account": "cust-rt1", "note": "surplus to balance"})
	if b := e.Balance("cust-rt1"); b.AvailableUSD != "110.00" {
		t.Fatalf("balance after the surplus credit: %s", b.AvailableUSD)
	}
	before := booksOf(t, e, x.ID, "cust-rt1", "ETH")
	roundTrip(e, eth, 2, func() {
		if v := e.Intent(x.ID); v.Status != "reverted" {
			t.Fatalf("after the reorg: %s", v.Status)
		}
	})
	sameBooks(t, "resolved overpayment, round trip", before, booksOf(t, e, x.ID, "cust-rt1", "ETH"))
	e.CheckLedger("cust-rt1")
}

// Issue 21 item 2: 10 % + 95 % pay a top-up; the 95 % one's surplus is
// resolved; the 10 % one is reorged out and mined again: paid, 105.00.
// Item 3: the same without the partner's return: what finance did not
// decide (the 95 % transfer minus its surplus) stays finance's, visibly, to
// the base unit.
func TestPartnerOfAResolvedOverpaymentLeavesAndComesBack(t *testing.T) {
	for _, returns := range []bool{true, false} {
		name := "returns"
		if !returns {
			name = "never returns"
		}
		t.Run(name, func(t *testing.T) {
			e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
			eth := payment.Ethereum
			x := e.CreateIntent("topup", "TOP-RT2", "cust-rt2", "100.00", "ETH")
			amount := paywatchtest.Units(x.AmountBaseUnits)
			a := send(t, e, x, pct(x.AmountBaseUnits, 10), "rt2-a")
			e.Chains[eth].Mine(1)
			e.Clock.Advance(time.Minute)
			b := send(t, e, x, pct(x.AmountBaseUnits, 95), "rt2-b")
			e.Chains[eth].Mine(2)
			e.Sync(eth)
			v := e.Intent(x.ID)
			if v.Status != "paid" || transferOf(t, v, b.TxID).Classification != "overpaid" {
				t.Fatalf("after payment: %s %+v", v.Status, v.Transfers)
			}
			bID := transferOf(t, v, b.TxID).ID
			resolveOK(t, e, bID, map[string]string{"action": "credit_account", "account": "cust-rt2", "note": "surplus"})
			if bal := e.Balance("cust-rt2"); bal.AvailableUSD != "105.00" {
				t.Fatalf("balance after the surplus credit: %s", bal.AvailableUSD)
			}
			before := booksOf(t, e, x.ID, "cust-rt2", "ETH")
			blocks := lastBlocks(e.Chains[eth], 3) // [a], [b], []
			reorgTo(e, eth, 3, [][]chains.Transfer{nil, blocks[1], nil, nil})
			left := e.Intent(x.ID)
			if left.Status != "reverted" {
				t.Fatalf("after the partner left: %s %+v", left.Status, left.Transfers)
			}
			if !returns {
				// The 95 % transfer no longer pays: its unresolved part
				// (its amount minus the surplus finance credited) is
				// received by the intent and in the inbox; the
				// reconciliation counts as resolved only what finance
				// decided.
				bAmount := pct(x.AmountBaseUnits, 95)
				surplus := new(big.Int).Sub(new(big.Int).Add(pct(x.AmountBaseUnits, 10), bAmount), amount)
				rest := new(big.Int).Sub(bAmount, surplus)
				if left.ReceivedBaseUnits != rest.String() {
					t.Fatalf("received %s, want %s (the 95 %% transfer minus its resolved surplus)", left.ReceivedBaseUnits, rest)
				}
				if !inbox(t, e)[bID] {
					t.Fatalf("the 95 %% transfer is not in the unresolved inbox")
				}
				settled, unres, resolved := recon(t, e, "ETH")
				// The orphaned 10 % had paid: reverted, it stays in the
				// books, unresolved, for finance.
				unresWant := new(big.Int).Add(rest, pct(x.AmountBaseUnits, 10))
				if settled != "0" || unres != unresWant.String() || resolved != surplus.String() {
					t.Fatalf("reconciliation settled %s unresolved %s resolved %s; want 0, %s, %s", settled, unres, resolved, unresWant, surplus)
				}
				return
			}
			reorgTo(e, eth, 4, append(blocks, nil, nil))
			sameBooks(t, "partner of a resolved overpayment, round trip", before, booksOf(t, e, x.ID, "cust-rt2", "ETH"))
			if bal := e.Balance("cust-rt2"); bal.AvailableUSD != "105.00" {
				t.Fatalf("balance after the round trip: %s", bal.AvailableUSD)
			}
			_ = a
			e.CheckLedger("cust-rt2")
		})
	}
}

// Issue 21 item 4: a late payment to intent A's address is credited to B
// (A's renewal); its block is reorged out and the transaction is back in the
// mempool. The transfer's intent is B, and B is what is decided again: a
// payment in progress (a debit of the order is refused), paid again once
// re-mined.
func TestCreditedTransferBackInTheMempoolRedecidesItsIntent(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(smallDepths))
	btc := payment.Bitcoin
	f := e.Chains[btc]
	a := e.CreateIntent("order", "ORD-RT4", "cust-rt4", "100.00", "BTC")
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.Sync(btc) // its scanner reports after the clock jump
	status, body := e.Do("POST", "/v1/intents/"+a.ID+"/renew", "storefront", nil)
	if status != 201 {
		t.Fatalf("renew: %d %s", status, body)
	}
	var b views.Intent
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	tr := broadcast(t, e, f, a, paywatchtest.Units(a.AmountBaseUnits), "rt4-late")
	f.Mine(2)
	e.Sync(btc)
	late := transferOf(t, e.Intent(a.ID), tr.TxID)
	if late.Classification != "late" {
		t.Fatalf("late payment: %+v", late)
	}
	resolveOK(t, e, late.ID, map[string]string{"action": "credit_intent", "intent_id": b.ID, "note": "paid the old address"})
	if v := e.Intent(b.ID); v.Status != "paid" {
		t.Fatalf("credited intent: %s", v.Status)
	}
	// Its blocks are reorged out; the transaction goes back to the mempool.
	f.Reorg(2, 1, true)
	e.Sync(btc)
	v := e.Intent(b.ID)
	if v.Status == "paid" || v.ReceivedBaseUnits != b.AmountBaseUnits {
		t.Fatalf("credited intent after the reorg: %s received %s, want a payment in progress of %s", v.Status, v.ReceivedBaseUnits, b.AmountBaseUnits)
	}
	status, body = e.Do("POST", "/v1/accounts/cust-rt4/debits", "storefront", map[string]string{"reference": "ORD-RT4", "amount_usd": "100.00"},
		"Idempotency-Key", "rt4-debit")
	if code, _ := errCode(body); status != 409 || code != "payment_in_progress" {
		t.Fatalf("debit while the credited payment is back in the mempool: %d %s", status, body)
	}
	f.Mine(2)
	e.Sync(btc)
	if v := e.Intent(b.ID); v.Status != "paid" {
		t.Fatalf("credited intent after the transaction is mined again: %s", v.Status)
	}
}

// Issue 21 item 5: an order paid on BTC by 40 % + 60 %, the full amount
// also sent to its LTC intent (a duplicate); the 60 % leaves the chain.
// Every last event body equals what the API shows.
func TestSiblingDecisionsLeaveNoStaleEvents(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin), paywatchtest.WithConfig(smallDepths))
	btc, ltc := payment.Bitcoin, payment.Litecoin
	x := e.CreateIntent("order", "ORD-RT5", "cust-rt5", "100.00", "BTC")
	y := e.CreateIntent("order", "ORD-RT5", "cust-rt5", "100.00", "LTC")
	send(t, e, x, pct(x.AmountBaseUnits, 40), "rt5-40")
	e.Chains[btc].Mine(1)
	send(t, e, x, pct(x.AmountBaseUnits, 60), "rt5-60")
	e.Chains[btc].Mine(2)
	e.Sync(btc)
	if v := e.Intent(x.ID); v.Status != "paid" {
		t.Fatalf("BTC intent: %s", v.Status)
	}
	send(t, e, y, paywatchtest.Units(y.AmountBaseUnits), "rt5-ltc")
	e.Chains[ltc].Mine(2)
	e.Sync(ltc)
	// The 60 % leaves the chain.
	blocks := lastBlocks(e.Chains[btc], 2)
	mark := lastSeq(t, e)
	reorgTo(e, btc, 2, [][]chains.Transfer{nil, nil, nil})
	checkBodiesSince(t, e, mark)
	// And back.
	mark = lastSeq(t, e)
	reorgTo(e, btc, 3, append(blocks, nil, nil))
	checkBodiesSince(t, e, mark)
}

// lastSeq is the seq of the newest event.
func lastSeq(t *testing.T, e *paywatchtest.Env) int64 {
	t.Helper()
	var seq int64
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// checkBodiesSince asserts that the last event written after seq about
// each intent and transfer equals what the API shows for that object now
// (the caller made no change since the step that wrote them).
func checkBodiesSince(t *testing.T, e *paywatchtest.Env, seq int64) {
	t.Helper()
	rows, err := e.Store.Pool().Query(context.Background(), `SELECT DISTINCT ON (obj) obj, kind, data FROM (
		SELECT seq, CASE WHEN type LIKE 'intent.%' THEN intent_id ELSE transfer_id END AS obj,
			split_part(type, '.', 1) AS kind, data
		FROM events WHERE seq > $1 AND (type LIKE 'intent.%' OR type LIKE 'transfer.%')) e
		ORDER BY obj, seq DESC`, seq)
	if err != nil {
		t.Fatal(err)
	}
	type body struct {
		obj, kind string
		data      []byte
	}
	var bs []body
	for rows.Next() {
		var b body
		if err := rows.Scan(&b.obj, &b.kind, &b.data); err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	rows.Close()
	if len(bs) == 0 {
		t.Fatalf("no event since %d", seq)
	}
	for _, b := range bs {
		// A key with the finance scope: the stored body is finance's
		// (storefront answers and the feed leave its notes out alike).
		path, scope := "/v1/intents/"+b.obj, "all"
		if b.kind == "transfer" {
			path, scope = "/v1/transfers/"+b.obj, "finance"
		}
		_, api := e.Do("GET", path, scope, nil)
		if d := jsonDiff(t, b.data, api); d != "" {
			t.Errorf("%s %s: last event body differs from the API: %s", b.kind, b.obj, d)
		}
	}
}

// jsonDiff lists the top-level fields where a and b differ, leaving out
// confirmations (a later block changes them without an event; the
// simulator compares whole bodies right after each commit).
func jsonDiff(t *testing.T, a, b []byte) string {
	t.Helper()
	var x, y map[string]any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	stripConfirmations(x)
	stripConfirmations(y)
	var out []string
	for k := range x {
		if !reflect.DeepEqual(x[k], y[k]) {
			xj, _ := json.Marshal(x[k])
			yj, _ := json.Marshal(y[k])
			out = append(out, fmt.Sprintf("%s: event %s, API %s", k, xj, yj))
		}
	}
	for k := range y {
		if _, ok := x[k]; !ok {
			out = append(out, fmt.Sprintf("%s: only in the API", k))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func stripConfirmations(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "confirmations")
		for _, e := range x {
			stripConfirmations(e)
		}
	case []any:
		for _, e := range x {
			stripConfirmations(e)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// Issue 21 item 6: finance refunds an underpaid intent's transfer: the
// intent is decided again at once (nothing counts for it any more: expired,
// received 0), not at some later rescan.
func TestRefundedUnderpaymentIsDecidedAtOnce(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	eth := payment.Ethereum
	x := e.CreateIntent("order", "ORD-RT6", "cust-rt6", "100.00", "ETH")
	tr := send(t, e, x, pct(x.AmountBaseUnits, 50), "rt6")
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := e.Intent(x.ID)
	if v.Status != "underpaid" {
		t.Fatalf("before the refund: %s", v.Status)
	}
	mark := lastSeq(t, e)
	resolveOK(t, e, transferOf(t, v, tr.TxID).ID, map[string]string{"action": "refunded", "refund_txid": "0x" + chainstest.TxID("rt6-refund"), "note": "sent back"})
	if v := e.Intent(x.ID); v.Status != "expired" || v.ReceivedBaseUnits != "0" {
		t.Fatalf("after the refund: %s received %s, want expired received 0", v.Status, v.ReceivedBaseUnits)
	}
	checkBodiesSince(t, e, mark)
}

// Issue 21 item 8: a top-up paid 110 % after its deadline is credited to it
// by finance: the 10.00 surplus stays finance's (in the inbox, unresolved in
// the reconciliation), not swallowed by the credit.
func TestSurplusOfACreditedLateOverpaymentStaysForFinance(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	eth := payment.Ethereum
	x := e.CreateIntent("topup", "TOP-RT8", "cust-rt8", "100.00", "ETH")
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	paid := pct(x.AmountBaseUnits, 110)
	tr := send(t, e, x, paid, "rt8")
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	late := transferOf(t, e.Intent(x.ID), tr.TxID)
	if late.Classification != "late" {
		t.Fatalf("late payment: %+v", late)
	}
	resolveOK(t, e, late.ID, map[string]string{"action": "credit_intent", "intent_id": x.ID, "note": "late but fine"})
	v := e.Intent(x.ID)
	if v.Status != "paid" || !v.Overpaid {
		t.Fatalf("credited: %s overpaid=%v", v.Status, v.Overpaid)
	}
	if bal := e.Balance("cust-rt8"); bal.AvailableUSD != "100.00" {
		t.Fatalf("balance: %s", bal.AvailableUSD)
	}
	surplus := new(big.Int).Sub(paid, paywatchtest.Units(x.AmountBaseUnits))
	if !inbox(t, e)[late.ID] {
		t.Fatalf("the credited transfer's surplus %s is not in the unresolved inbox", surplus)
	}
	settled, unres, resolved := recon(t, e, "ETH")
	if settled != x.AmountBaseUnits || unres != surplus.String() || resolved != "0" {
		t.Fatalf("reconciliation settled %s unresolved %s resolved %s; want %s, %s, 0", settled, unres, resolved, x.AmountBaseUnits, surplus)
	}
	// Finance then credits the surplus to the account: 110.00 in all.
	resolveOK(t, e, late.ID, map[string]string{"action": "credit_account", "account": "cust-rt8", "note": "surplus"})
	if bal := e.Balance("cust-rt8"); bal.AvailableUSD != "110.00" {
		t.Fatalf("balance after the surplus credit: %s", bal.AvailableUSD)
	}
	if inbox(t, e)[late.ID] {
		t.Fatalf("the transfer is still unresolved after its surplus was decided")
	}
}

// A paid top-up decided again (a duplicate payment, a finance decision on
// it, the sweep, a restart's rescan) stays credited exactly once: the
// credit follows the decision, it is not added by it (issue 21: loosening
// the credit-once guard passed every test before).
func TestRedecidingAPaidTopupCreditsItOnce(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	eth := payment.Ethereum
	x := e.CreateIntent("topup", "TOP-ONCE", "cust-once", "100.00", "ETH")
	send(t, e, x, paywatchtest.Units(x.AmountBaseUnits), "once-1")
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	if v := e.Intent(x.ID); v.Status != "paid" {
		t.Fatalf("top-up: %s", v.Status)
	}
	dup := send(t, e, x, paywatchtest.Units(x.AmountBaseUnits), "once-2")
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	resolveOK(t, e, transferOf(t, e.Intent(x.ID), dup.TxID).ID, map[string]string{"action": "ignore", "note": "paid twice, sent back by hand"})
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RequestRescan(context.Background(), "ethereum", 1, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.Sync(eth)
	if types := e.CheckLedger("cust-once"); len(types) != 1 || types[0] != "credit" {
		t.Fatalf("ledger %v, want one credit", types)
	}
	if b := e.Balance("cust-once"); b.AvailableUSD != "100.00" {
		t.Fatalf("balance %s", b.AvailableUSD)
	}
}

// A renewal's commit announces the old intent as it leaves it: its last
// event is intent.superseded with superseded_by set (it was an
// intent.expired body saying not renewed; found by the simulator, seed
// 115 of a 20-step run).
func TestRenewalAnnouncesTheOldIntentAsItLeavesIt(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	x := e.CreateIntent("order", "ORD-RN", "cust-rn", "100.00", "ETH")
	e.Clock.Advance(31 * time.Minute)
	e.Sync(payment.Ethereum)
	mark := lastSeq(t, e)
	status, body := e.Do("POST", "/v1/intents/"+x.ID+"/renew", "storefront", nil)
	if status != 201 {
		t.Fatalf("renew: %d %s", status, body)
	}
	checkBodiesSince(t, e, mark)
	if ev := e.IntentEvents(x.ID); ev[len(ev)-1] != "intent.superseded" {
		t.Fatalf("old intent's events %v", ev)
	}
}
