package matcher

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// deadline is the deadline of every intent in these tests.
var deadline = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)

// Instants relative to the deadline.
var (
	before  = deadline.Add(-10 * time.Minute) // "now" while the intent is open
	early   = deadline.Add(-20 * time.Minute) // a first transfer
	middle  = deadline.Add(-15 * time.Minute) // a second one
	later   = deadline.Add(-12 * time.Minute) // a third one
	after   = deadline.Add(time.Hour)         // "now" once the deadline passed
	tooLate = deadline.Add(5 * time.Minute)   // first seen after the deadline
)

// usdt100 is an intent for 100 USDT token units.
func usdt100() Intent {
	return Intent{Asset: payment.USDT, Amount: big.NewInt(100), Deadline: deadline}
}

func with(in Intent, f func(*Intent)) Intent { f(&in); return in }

// tx is a transfer first seen at seen, recorded in that order (the
// second it was seen at).
func tx(amount int64, seen time.Time) Transfer {
	return Transfer{Asset: payment.USDT, Amount: big.NewInt(amount), FirstSeen: seen, Order: orderAt(seen)}
}

// orderAt is a record order for an instant: its second.
func orderAt(at time.Time) int64 { return at.Unix() }

func conf(t Transfer) Transfer                                      { t.Confirmed = true; return t }
func credited(t Transfer) Transfer                                  { t.Credited = true; return t }
func orphan(t Transfer) Transfer                                    { t.Orphaned = true; return t }
func resolved(t Transfer, n int64) Transfer                         { t.Resolved = big.NewInt(n); return t }
func asset(t Transfer, a payment.Asset) Transfer                    { t.Asset = a; return t }
func recorded(t Transfer, at time.Time) Transfer                    { t.Order = orderAt(at); return t }
func classes(cs ...payment.Classification) []payment.Classification { return cs }

const (
	S  = payment.Settles
	P  = payment.Partial
	O  = payment.Overpaid
	L  = payment.Late
	D  = payment.Duplicate
	W  = payment.WrongAsset
	Du = payment.Dust
	R  = payment.Reverted
)

// want is the expected decision, with small integers.
type want struct {
	status              payment.IntentStatus
	classes             []payment.Classification
	settled             []int64
	overpaid, late      bool
	received, confirmed int64
	surplus             int64
}

type decideCase struct {
	name string
	in   Intent
	tr   []Transfer
	now  time.Time
	want want
}

func runCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := decideChecked(t, c.in, c.tr, c.now)
			w := c.want
			if w.classes == nil {
				w.classes = []payment.Classification{}
			}
			if d.Status != w.status || !slices.Equal(d.Classes, w.classes) || d.Overpaid != w.overpaid || d.Late != w.late {
				t.Fatalf("got %s, want status %s classes %v overpaid=%v late=%v", fmtDecision(d), w.status, w.classes, w.overpaid, w.late)
			}
			wantInt(t, "Received", d.Received, w.received)
			wantInt(t, "ConfirmedSum", d.ConfirmedSum, w.confirmed)
			wantInt(t, "Surplus", d.Surplus, w.surplus)
			if w.settled != nil {
				for i, s := range w.settled {
					wantInt(t, fmt.Sprintf("Settled[%d]", i), d.Settled[i], s)
				}
			}
		})
	}
}

func wantInt(t *testing.T, name string, got *big.Int, want int64) {
	t.Helper()
	if got == nil || got.Cmp(big.NewInt(want)) != 0 {
		t.Errorf("%s = %v, want %d", name, got, want)
	}
}

// Rules 1 and 2: another asset is wrong_asset, a malformed amount dust;
// neither counts, even credited.
func TestRuleAssetAndMalformed(t *testing.T) {
	runCases(t, []decideCase{
		{"another asset", usdt100(), []Transfer{conf(asset(tx(100, early), payment.USDC))}, before,
			want{status: payment.IntentAwaiting, classes: classes(W)}},
		{"another asset, credited", usdt100(), []Transfer{conf(credited(asset(tx(100, early), payment.USDC)))}, before,
			want{status: payment.IntentAwaiting, classes: classes(W)}},
		{"negative amount, credited", usdt100(), []Transfer{conf(credited(tx(-5, early)))}, before,
			want{status: payment.IntentAwaiting, classes: classes(Du)}},
		{"nil amount", usdt100(), []Transfer{{Asset: payment.USDT, FirstSeen: early, Confirmed: true}}, before,
			want{status: payment.IntentAwaiting, classes: classes(Du)}},
	})
}

// Rule 3: a credit counts whatever the deadline, the dust minimum or a
// renewal, unless the payable was paid by other means.
func TestRuleCredited(t *testing.T) {
	dusty := with(usdt100(), func(in *Intent) { in.DustMin = big.NewInt(200) })
	renewed := with(usdt100(), func(in *Intent) { in.Superseded = true })
	elsewhere := with(usdt100(), func(in *Intent) { in.PaidElsewhere = true })
	runCases(t, []decideCase{
		{"late, credited: paid", usdt100(), []Transfer{conf(credited(tx(100, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: classes(S), settled: []int64{100}, received: 100, confirmed: 100}},
		{"below the dust minimum, credited: counts", dusty, []Transfer{conf(credited(tx(100, early)))}, before,
			want{status: payment.IntentPaid, classes: classes(S), received: 100, confirmed: 100}},
		{"renewed intent, credited: paid", renewed, []Transfer{conf(credited(tx(100, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: classes(S), received: 100, confirmed: 100}},
		{"credited, payable paid elsewhere: duplicate", elsewhere, []Transfer{conf(credited(tx(100, early)))}, before,
			want{status: payment.IntentAwaiting, classes: classes(D)}},
		{"late and overpaying, credited: its surplus is not the credit's", usdt100(), []Transfer{conf(credited(tx(110, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: classes(O), settled: []int64{100}, overpaid: true, received: 110, confirmed: 110, surplus: 10}},
	})
}

// Rules 4 to 7: dust, first seen after the deadline, a renewed intent, a
// payable paid by other means.
func TestRulesThatACreditOverrides(t *testing.T) {
	dusty := with(usdt100(), func(in *Intent) { in.DustMin = big.NewInt(10) })
	renewed := with(usdt100(), func(in *Intent) { in.Superseded = true })
	elsewhere := with(usdt100(), func(in *Intent) { in.PaidElsewhere = true })
	runCases(t, []decideCase{
		{"zero amount", usdt100(), []Transfer{conf(tx(0, early))}, before, want{status: payment.IntentAwaiting, classes: classes(Du)}},
		{"below the dust minimum", dusty, []Transfer{conf(tx(9, early))}, before, want{status: payment.IntentAwaiting, classes: classes(Du)}},
		{"at the dust minimum counts", dusty, []Transfer{conf(tx(10, early))}, before,
			want{status: payment.IntentDetected, classes: classes(P), received: 10, confirmed: 10}},
		{"first seen exactly at the deadline counts", usdt100(), []Transfer{conf(tx(100, deadline))}, after,
			want{status: payment.IntentPaid, classes: classes(S), received: 100, confirmed: 100}},
		{"one nanosecond after the deadline is late", usdt100(), []Transfer{conf(tx(100, deadline.Add(time.Nanosecond)))}, after,
			want{status: payment.IntentExpired, classes: classes(L), late: true}},
		{"late after a partial: underpaid", usdt100(), []Transfer{conf(tx(40, early)), conf(tx(60, tooLate))}, after,
			want{status: payment.IntentUnderpaid, classes: classes(P, L), late: true, received: 40, confirmed: 40}},
		{"sent to a renewed intent, in time: late", renewed, []Transfer{conf(tx(100, early))}, after,
			want{status: payment.IntentSuperseded, classes: classes(L), late: true}},
		{"payable paid elsewhere: duplicate, detected before the deadline", elsewhere, []Transfer{conf(tx(100, early))}, before,
			want{status: payment.IntentDetected, classes: classes(D)}},
		{"payable paid elsewhere: duplicate, expired after it", elsewhere, []Transfer{conf(tx(100, early))}, after,
			want{status: payment.IntentExpired, classes: classes(D)}},
	})
}

// Rule 8: what finance decided on never counts; a transfer whose surplus
// was resolved counts with the rest.
func TestRuleResolvedParts(t *testing.T) {
	runCases(t, []decideCase{
		{"resolved whole (refunded underpayment): nothing counts", usdt100(), []Transfer{conf(resolved(tx(50, early), 50))}, after,
			want{status: payment.IntentExpired, classes: classes(P)}},
		{"resolved whole while another pays: duplicate", usdt100(), []Transfer{conf(resolved(tx(50, early), 50)), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: classes(D, S), received: 100, confirmed: 100}},
		{"a refunded duplicate whose payer left stays a duplicate", usdt100(), []Transfer{orphan(tx(100, early)), conf(resolved(tx(100, middle), 100))}, after,
			want{status: payment.IntentExpired, classes: classes(S, D)}},
		{"surplus resolved: the rest pays", usdt100(), []Transfer{conf(resolved(tx(110, early), 10))}, before,
			want{status: payment.IntentPaid, classes: classes(O), settled: []int64{100}, overpaid: true, received: 100, confirmed: 100}},
		// The partner shows what it would be on the chain (rule 10).
		{"surplus resolved, partner gone: the rest is partial", usdt100(), []Transfer{orphan(tx(10, early)), conf(resolved(tx(95, middle), 5))}, after,
			want{status: payment.IntentUnderpaid, classes: classes(S, P), received: 90, confirmed: 90}},
		{"surplus resolved, partner back: paid exactly", usdt100(), []Transfer{conf(tx(10, early)), conf(resolved(tx(95, middle), 5))}, after,
			want{status: payment.IntentPaid, classes: classes(S, O), settled: []int64{10, 90}, overpaid: true, received: 100, confirmed: 100}},
		{"resolved duplicate stays a duplicate", usdt100(), []Transfer{conf(tx(100, early)), conf(resolved(tx(100, middle), 100))}, before,
			want{status: payment.IntentPaid, classes: classes(S, D), received: 100, confirmed: 100}},
		{"resolved late stays late", usdt100(), []Transfer{conf(resolved(tx(100, tooLate), 100))}, after,
			want{status: payment.IntentExpired, classes: classes(L), late: true}},
	})
}

// Rule 9: counting transfers add up in the order they were recorded.
func TestRulePayingSet(t *testing.T) {
	tol := func(n int64) Intent { return with(usdt100(), func(in *Intent) { in.Tolerance = big.NewInt(n) }) }
	runCases(t, []decideCase{
		{"nothing yet", usdt100(), nil, before, want{status: payment.IntentAwaiting}},
		{"nothing, deadline passed", usdt100(), nil, after, want{status: payment.IntentExpired}},
		{"exact, unconfirmed", usdt100(), []Transfer{tx(100, early)}, before,
			want{status: payment.IntentDetected, classes: classes(S), received: 100}},
		{"exact, confirmed", usdt100(), []Transfer{conf(tx(100, early))}, before,
			want{status: payment.IntentPaid, classes: classes(S), settled: []int64{100}, received: 100, confirmed: 100}},
		{"exact, unconfirmed, deadline passed: seen in time", usdt100(), []Transfer{tx(100, early)}, after,
			want{status: payment.IntentDetected, classes: classes(S), received: 100}},
		{"two parts", usdt100(), []Transfer{conf(tx(40, early)), conf(tx(60, middle))}, before,
			want{status: payment.IntentPaid, classes: classes(S, S), settled: []int64{40, 60}, received: 100, confirmed: 100}},
		{"two parts, one confirmed", usdt100(), []Transfer{conf(tx(40, early)), tx(60, middle)}, before,
			want{status: payment.IntentDetected, classes: classes(S, S), received: 100, confirmed: 40}},
		{"partial", usdt100(), []Transfer{conf(tx(40, early))}, before,
			want{status: payment.IntentDetected, classes: classes(P), settled: []int64{0}, received: 40, confirmed: 40}},
		{"partial, deadline passed: underpaid", usdt100(), []Transfer{tx(40, early)}, after,
			want{status: payment.IntentUnderpaid, classes: classes(P), received: 40}},
		{"overpaid", usdt100(), []Transfer{conf(tx(150, early))}, before,
			want{status: payment.IntentPaid, classes: classes(O), settled: []int64{150 - 50}, overpaid: true, received: 150, confirmed: 150, surplus: 50}},
		{"the last of the set overpays", usdt100(), []Transfer{conf(tx(60, early)), conf(tx(60, middle))}, before,
			want{status: payment.IntentPaid, classes: classes(S, O), settled: []int64{60, 40}, overpaid: true, received: 120, confirmed: 120, surplus: 20}},
		{"after the set: duplicate", usdt100(), []Transfer{conf(tx(100, early)), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: classes(S, D), received: 100, confirmed: 100}},
		{"tolerance: amount minus tolerance pays", tol(2), []Transfer{conf(tx(98, early))}, before,
			want{status: payment.IntentPaid, classes: classes(S), settled: []int64{98}, received: 98, confirmed: 98}},
		{"tolerance: one less does not", tol(2), []Transfer{conf(tx(97, early))}, before,
			want{status: payment.IntentDetected, classes: classes(P), received: 97, confirmed: 97}},
		{"tolerance above the amount: any positive amount pays", tol(500), []Transfer{conf(tx(1, early))}, before,
			want{status: payment.IntentPaid, classes: classes(S), received: 1, confirmed: 1}},
		// Invariant 6: the order is when paywatch recorded them, not a block
		// time that lags: a later transfer stamped before the payer is a
		// duplicate.
		{"recorded later, stamped earlier: duplicate", usdt100(),
			[]Transfer{conf(tx(100, middle)), conf(recorded(tx(100, early), later))}, before,
			want{status: payment.IntentPaid, classes: classes(S, D), received: 100, confirmed: 100}},
		{"credited later counts from the credit on", usdt100(),
			[]Transfer{conf(recorded(credited(tx(100, early)), after)), conf(tx(100, middle))}, after.Add(time.Minute),
			want{status: payment.IntentPaid, classes: classes(D, S), received: 100, confirmed: 100}},
	})
}

// Rule 10: an orphaned transfer counts for nothing; it shows what it would
// be on the chain, reverted when it would pay an intent that is or was paid.
func TestRuleOrphaned(t *testing.T) {
	wasPaid := with(usdt100(), func(in *Intent) { in.WasPaid = true })
	runCases(t, []decideCase{
		{"payer reorged out: reverted", wasPaid, []Transfer{orphan(tx(100, early))}, after,
			want{status: payment.IntentReverted, classes: classes(R)}},
		{"payer back: paid again", wasPaid, []Transfer{conf(tx(100, early))}, after,
			want{status: payment.IntentPaid, classes: classes(S), received: 100, confirmed: 100}},
		{"vanished from the mempool before it paid", usdt100(), []Transfer{orphan(tx(100, early))}, before,
			want{status: payment.IntentAwaiting, classes: classes(S)}},
		{"another pays now: the old payer is reverted", wasPaid, []Transfer{orphan(tx(100, early)), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: classes(R, S), received: 100, confirmed: 100}},
		{"an orphaned late one stays late", usdt100(), []Transfer{orphan(tx(100, tooLate))}, after,
			want{status: payment.IntentExpired, classes: classes(L)}},
	})
}

// DecidePayable: paid at most once, the payer stays while its payment
// holds, the first complete payment pays, and a later complete one waits
// behind it.
func TestDecidePayable(t *testing.T) {
	a, b := usdt100(), usdt100()
	paidA := []Transfer{conf(tx(100, early))}
	paidB := []Transfer{conf(tx(100, middle))}
	type pcase struct {
		name     string
		p        Payable
		in       []Intent
		tr       [][]Transfer
		payer    int
		statuses []payment.IntentStatus
	}
	for _, c := range []pcase{
		{"first complete pays, the other is paid elsewhere", Payable{Payer: -1}, []Intent{a, b}, [][]Transfer{paidA, paidB}, 0,
			[]payment.IntentStatus{payment.IntentPaid, payment.IntentDetected}},
		{"first complete pays whatever the intents' order", Payable{Payer: -1}, []Intent{a, b}, [][]Transfer{paidB, paidA}, 1,
			[]payment.IntentStatus{payment.IntentDetected, payment.IntentPaid}},
		{"the payer stays while its payment holds", Payable{Payer: 1}, []Intent{a, b}, [][]Transfer{paidA, paidB}, 1,
			[]payment.IntentStatus{payment.IntentDetected, payment.IntentPaid}},
		{"an earlier payment in progress holds a later confirmed one", Payable{Payer: -1}, []Intent{a, b},
			[][]Transfer{{tx(100, early)}, paidB}, -1, []payment.IntentStatus{payment.IntentDetected, payment.IntentDetected}},
		{"a debit paid it: every payment is a duplicate", Payable{PaidByDebit: true, Payer: -1}, []Intent{a, b},
			[][]Transfer{paidA, paidB}, -1, []payment.IntentStatus{payment.IntentDetected, payment.IntentDetected}},
		{"nothing complete", Payable{Payer: -1}, []Intent{a, b}, [][]Transfer{{conf(tx(40, early))}, nil}, -1,
			[]payment.IntentStatus{payment.IntentDetected, payment.IntentAwaiting}},
	} {
		t.Run(c.name, func(t *testing.T) {
			payer, ds := DecidePayable(c.p, c.in, c.tr, before)
			got := make([]payment.IntentStatus, len(ds))
			for i, d := range ds {
				got[i] = d.Status
			}
			if payer != c.payer || !slices.Equal(got, c.statuses) {
				t.Fatalf("payer %d %v, want %d %v", payer, got, c.payer, c.statuses)
			}
			checkPayable(t, c.p, c.in, c.tr, before, payer, ds)
		})
	}
}

// TestDecidePayableProperties runs random payables through checkPayable.
func TestDecidePayableProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 7))
	for n := range 3000 {
		p, ins, trs, now := randomPayable(r)
		payer, ds := DecidePayable(p, ins, trs, now)
		if t.Failed() {
			return
		}
		t.Run(fmt.Sprint(n), func(t *testing.T) { checkPayable(t, p, ins, trs, now, payer, ds) })
	}
}

func randomPayable(r *rand.Rand) (Payable, []Intent, [][]Transfer, time.Time) {
	k := 1 + r.IntN(3)
	ins := make([]Intent, k)
	trs := make([][]Transfer, k)
	for i := range ins {
		ins[i] = Intent{Asset: payment.USDT, Amount: big.NewInt(int64(50 + r.IntN(100))), Tolerance: big.NewInt(int64(r.IntN(3))),
			DustMin: big.NewInt(int64(r.IntN(3))), Deadline: deadline, Superseded: r.IntN(6) == 0, WasPaid: r.IntN(4) == 0}
		for range r.IntN(4) {
			trs[i] = append(trs[i], randomTransfer(r))
		}
	}
	p := Payable{Payer: r.IntN(k+1) - 1, PaidByDebit: r.IntN(8) == 0}
	now := deadline.Add(time.Duration(r.IntN(120)-60) * time.Minute)
	return p, ins, trs, now
}

func randomTransfer(r *rand.Rand) Transfer {
	seen := deadline.Add(time.Duration(r.IntN(60)-50) * time.Minute)
	t := Transfer{Asset: []payment.Asset{payment.USDT, payment.USDT, payment.USDT, payment.USDC}[r.IntN(4)],
		Amount: big.NewInt(int64(r.IntN(160))), FirstSeen: seen, Order: orderAt(seen) + 60*int64(r.IntN(5)),
		Confirmed: r.IntN(3) > 0, Orphaned: r.IntN(6) == 0, Credited: r.IntN(8) == 0}
	if r.IntN(5) == 0 {
		t.Resolved = big.NewInt(int64(r.IntN(int(t.Amount.Int64()) + 1)))
	}
	return t
}

// checkPayable checks what DecidePayable must guarantee: each decision is
// Decide's for the flags it set; at most one intent is paid, and it is the
// payer; the payer stays when its own payment holds; a paid intent's
// payable is not paid by a debit; deciding again with the payer found
// gives the same.
func checkPayable(t *testing.T, p Payable, ins []Intent, trs [][]Transfer, now time.Time, payer int, ds []Decision) {
	t.Helper()
	// The flags the rule gives each intent: paid elsewhere when a debit or
	// another intent pays; held behind the first complete payment while no
	// intent pays.
	first := -1
	if payer < 0 && !p.PaidByDebit {
		for i, d := range ds {
			if d.Complete && (first < 0 || d.Completed < ds[first].Completed) {
				first = i
			}
		}
	}
	paid := -1
	for i, d := range ds {
		in := ins[i]
		in.PaidElsewhere = p.PaidByDebit || (payer >= 0 && i != payer)
		in.Held = first >= 0 && i != first
		if err := checkDecision(in, trs[i], now, d); err != nil {
			t.Fatalf("intent %d (%s): %v\ntransfers %s", i, fmtIntent(in), err, fmtTransfers(trs[i]))
		}
		if d.Status == payment.IntentPaid {
			if paid >= 0 {
				t.Fatalf("intents %d and %d are both paid", paid, i)
			}
			paid = i
		}
	}
	if paid != payer {
		t.Fatalf("payer %d, paid intent %d", payer, paid)
	}
	if p.PaidByDebit && payer >= 0 {
		t.Fatalf("paid by a debit and by intent %d", payer)
	}
	if !p.PaidByDebit && p.Payer >= 0 {
		alone := Decide(ins[p.Payer], trs[p.Payer], now)
		if alone.Status == payment.IntentPaid && payer != p.Payer {
			t.Fatalf("payer %d still paid on its own, but %d took over", p.Payer, payer)
		}
	}
	p2 := p
	p2.Payer = payer
	payer2, ds2 := DecidePayable(p2, ins, trs, now)
	if payer2 != payer {
		t.Fatalf("not stable: payer %d, then %d", payer, payer2)
	}
	for i := range ds {
		if !sameDecision(ds[i], ds2[i]) {
			t.Fatalf("not stable for intent %d: %s, then %s", i, fmtDecision(ds[i]), fmtDecision(ds2[i]))
		}
	}
}

func TestDecideMany(t *testing.T) {
	// Twenty parts of five pay the intent, the 21st is a duplicate, in any
	// input order.
	in := usdt100()
	var tr []Transfer
	for i := range 21 {
		tr = append(tr, conf(tx(5, early.Add(time.Duration(i)*time.Second))))
	}
	tr = append(tr, conf(asset(tx(100, early), payment.USDC)), tx(0, early))
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(tr), func(i, j int) { tr[i], tr[j] = tr[j], tr[i] })
	d := decideChecked(t, in, tr, before)
	if d.Status != payment.IntentPaid {
		t.Fatalf("Status = %q, want paid", d.Status)
	}
	for i, c := range d.Classes {
		var want payment.Classification
		switch {
		case tr[i].Asset != payment.USDT:
			want = W
		case tr[i].Amount.Sign() == 0:
			want = Du
		case tr[i].FirstSeen.Equal(early.Add(20 * time.Second)):
			want = D
		default:
			want = S
		}
		if c != want {
			t.Errorf("transfer %d (%v): %q, want %q", i, tr[i].FirstSeen, c, want)
		}
	}
	wantInt(t, "Received", d.Received, 100)
}

func TestDecideHugeAmounts(t *testing.T) {
	huge, _ := new(big.Int).SetString("1"+strings.Repeat("0", 80), 10)
	in := Intent{Asset: payment.Native, Amount: huge, Deadline: deadline}
	half := new(big.Int).Rsh(huge, 1)
	rest := new(big.Int).Sub(huge, half)
	rest.Add(rest, big.NewInt(3))
	tr := []Transfer{
		{Asset: payment.Native, Amount: half, FirstSeen: early, Order: 1, Confirmed: true},
		{Asset: payment.Native, Amount: rest, FirstSeen: middle, Order: 2, Confirmed: true},
	}
	d := decideChecked(t, in, tr, before)
	if d.Status != payment.IntentPaid || !slices.Equal(d.Classes, classes(S, O)) {
		t.Fatalf("got %q %v", d.Status, d.Classes)
	}
	wantInt(t, "Surplus", d.Surplus, 3)
}

func TestDecisionsDoNotShareIntegers(t *testing.T) {
	tr := []Transfer{conf(tx(150, early))}
	d1 := Decide(usdt100(), tr, before)
	d2 := Decide(usdt100(), tr, before)
	d1.Received.Add(d1.Received, big.NewInt(1000))
	d1.Surplus.SetInt64(0)
	d1.Settled[0].SetInt64(7)
	wantInt(t, "d2.Received", d2.Received, 150)
	wantInt(t, "d2.Surplus", d2.Surplus, 50)
	wantInt(t, "d2.Settled[0]", d2.Settled[0], 100)
}

func TestClassificationNeedsReview(t *testing.T) {
	for _, c := range allClasses {
		if got, want := c.NeedsReview(), c != payment.Settles; got != want {
			t.Errorf("%q.NeedsReview() = %v, want %v", c, got, want)
		}
	}
}

func TestStatusFinal(t *testing.T) {
	want := map[payment.IntentStatus]bool{
		payment.IntentAwaiting: false, payment.IntentDetected: false,
		payment.IntentPaid: true, payment.IntentExpired: true, payment.IntentUnderpaid: true, payment.IntentSuperseded: true, payment.IntentReverted: true,
	}
	for _, s := range allStatuses {
		if got := s.Final(); got != want[s] {
			t.Errorf("%q.Final() = %v, want %v", s, got, want[s])
		}
	}
}

var allStatuses = []payment.IntentStatus{payment.IntentAwaiting, payment.IntentDetected, payment.IntentPaid, payment.IntentExpired, payment.IntentUnderpaid, payment.IntentSuperseded, payment.IntentReverted}

var allClasses = []payment.Classification{S, P, O, L, D, W, payment.UnknownAddress, Du, R}

// decideChecked calls Decide and checks every property a decision must have
// whatever its input (see checkDecision).
func decideChecked(t *testing.T, in Intent, tr []Transfer, now time.Time) Decision {
	t.Helper()
	d := Decide(in, tr, now)
	if err := checkDecision(in, tr, now, d); err != nil {
		t.Fatalf("%v\nintent %s\ntransfers %s", err, fmtIntent(in), fmtTransfers(tr))
	}
	return d
}

// checkDecision verifies the properties of d = Decide(in, tr, now): shape;
// sums (Received, ConfirmedSum, Surplus from the classes and the counted
// parts); settled parts never above what counts, and exactly the amount
// (or what reached amount − tolerance) for a complete set; a resolved part
// never counts; paid only when complete, confirmed and not held or paid
// elsewhere; the same decision for the same facts in any input order with
// distinct record times; inputs untouched.
func checkDecision(in Intent, tr []Transfer, now time.Time, d Decision) error {
	inCopy, trCopy := fmtIntent(in), fmtTransfers(tr)
	if len(d.Classes) != len(tr) || len(d.Settled) != len(tr) {
		return fmt.Errorf("%d classes, %d settled for %d transfers", len(d.Classes), len(d.Settled), len(tr))
	}
	if d.Received == nil || d.ConfirmedSum == nil || d.Surplus == nil {
		return fmt.Errorf("nil integer in %+v", d)
	}
	if !slices.Contains(allStatuses, d.Status) {
		return fmt.Errorf("unknown status %q", d.Status)
	}
	received, confirmed, settled := new(big.Int), new(big.Int), new(big.Int)
	late, paying, allConfirmed := false, 0, true
	for i, c := range d.Classes {
		x := tr[i]
		if !slices.Contains(allClasses, c) || c == payment.UnknownAddress {
			return fmt.Errorf("transfer %d: class %q", i, c)
		}
		if d.Settled[i] == nil || d.Settled[i].Sign() < 0 {
			return fmt.Errorf("transfer %d: settled %v", i, d.Settled[i])
		}
		if x.Orphaned {
			if d.Settled[i].Sign() != 0 {
				return fmt.Errorf("orphaned transfer %d settles %s", i, d.Settled[i])
			}
			continue
		}
		if c == R {
			return fmt.Errorf("transfer %d is on the chain but reverted", i)
		}
		if (x.Asset != in.Asset) != (c == W) {
			return fmt.Errorf("transfer %d: asset %q, intent %q, class %q", i, x.Asset, in.Asset, c)
		}
		counts := new(big.Int)
		if x.Amount != nil {
			counts.Sub(x.Amount, orZero(x.Resolved))
		}
		if c == S || c == O || c == P {
			received.Add(received, counts)
			if x.Confirmed {
				confirmed.Add(confirmed, counts)
			}
		}
		if c == S || c == O {
			paying++
			allConfirmed = allConfirmed && x.Confirmed
			if d.Settled[i].Cmp(counts) > 0 {
				return fmt.Errorf("transfer %d settles %s of the %s that count", i, d.Settled[i], counts)
			}
			if (c == O) != (x.Amount.Cmp(d.Settled[i]) > 0) {
				return fmt.Errorf("transfer %d: class %q, amount %s, settled %s", i, c, x.Amount, d.Settled[i])
			}
			settled.Add(settled, d.Settled[i])
		} else if d.Settled[i].Sign() != 0 {
			return fmt.Errorf("transfer %d is %q but settles %s", i, c, d.Settled[i])
		}
		if c == L {
			late = true
		}
		if x.Credited && in.PaidElsewhere && c != W && c != Du && c != D {
			return fmt.Errorf("transfer %d credited to a payable paid elsewhere: class %q", i, c)
		}
	}
	if received.Cmp(d.Received) != 0 || confirmed.Cmp(d.ConfirmedSum) != 0 {
		return fmt.Errorf("Received %s ConfirmedSum %s, classes sum to %s and %s", d.Received, d.ConfirmedSum, received, confirmed)
	}
	if d.Late != late {
		return fmt.Errorf("Late = %v, classes say %v", d.Late, late)
	}
	amount := orZero(in.Amount)
	required := new(big.Int).Sub(amount, orZero(in.Tolerance))
	if required.Sign() < 1 {
		required.SetInt64(1)
	}
	if d.Complete != (paying > 0) {
		return fmt.Errorf("Complete = %v with %d paying transfers", d.Complete, paying)
	}
	if d.Complete && (settled.Cmp(required) < 0 || settled.Cmp(amount) > 0) {
		return fmt.Errorf("a complete set settles %s: not within [%s, %s]", settled, required, amount)
	}
	if surplus := new(big.Int).Sub(d.Received, amount); d.Complete && surplus.Sign() > 0 {
		if surplus.Cmp(d.Surplus) != 0 {
			return fmt.Errorf("Surplus = %s, received minus amount is %s", d.Surplus, surplus)
		}
	} else if d.Surplus.Sign() != 0 {
		return fmt.Errorf("Surplus = %s without one", d.Surplus)
	}
	if d.Status == payment.IntentPaid && (!d.Complete || !allConfirmed || in.Held || in.PaidElsewhere) {
		return fmt.Errorf("paid: complete %v, confirmed %v, held %v, paid elsewhere %v", d.Complete, allConfirmed, in.Held, in.PaidElsewhere)
	}
	if d.Complete && allConfirmed && !in.Held && !in.PaidElsewhere && d.Status != payment.IntentPaid {
		return fmt.Errorf("complete and confirmed but %q", d.Status)
	}
	if in.WasPaid && d.Status != payment.IntentPaid && d.Status != payment.IntentReverted {
		return fmt.Errorf("was paid, not paid now, but %q", d.Status)
	}
	// Facts, not their order: reversed input, same per-transfer decision
	// (when record times do not tie).
	if distinctRecorded(tr) {
		rev := slices.Clone(tr)
		slices.Reverse(rev)
		d3 := Decide(in, rev, now)
		slices.Reverse(d3.Classes)
		slices.Reverse(d3.Settled)
		if !sameDecision(d, d3) {
			return fmt.Errorf("depends on input order: %s, reversed %s", fmtDecision(d), fmtDecision(d3))
		}
	}
	if fmtIntent(in) != inCopy || fmtTransfers(tr) != trCopy {
		return fmt.Errorf("inputs modified")
	}
	return nil
}

func distinctRecorded(tr []Transfer) bool {
	for i := range tr {
		for j := range i {
			if tr[i].Order == tr[j].Order {
				return false
			}
		}
	}
	return true
}

func sameDecision(a, b Decision) bool {
	if a.Status != b.Status || a.Overpaid != b.Overpaid || a.Late != b.Late || a.Complete != b.Complete ||
		a.Received.Cmp(b.Received) != 0 || a.ConfirmedSum.Cmp(b.ConfirmedSum) != 0 || a.Surplus.Cmp(b.Surplus) != 0 ||
		!slices.Equal(a.Classes, b.Classes) {
		return false
	}
	for i := range a.Settled {
		if a.Settled[i].Cmp(b.Settled[i]) != 0 {
			return false
		}
	}
	return true
}

func fmtDecision(d Decision) string {
	return fmt.Sprintf("{%s overpaid=%v late=%v received=%s confirmed=%s surplus=%s %v settled=%v}",
		d.Status, d.Overpaid, d.Late, d.Received, d.ConfirmedSum, d.Surplus, d.Classes, d.Settled)
}

func fmtIntent(in Intent) string {
	return fmt.Sprintf("{%s amount=%v tol=%v dust=%v deadline=%s superseded=%v was_paid=%v elsewhere=%v held=%v}",
		in.Asset, in.Amount, in.Tolerance, in.DustMin, in.Deadline.Format(time.RFC3339Nano), in.Superseded, in.WasPaid, in.PaidElsewhere, in.Held)
}

func fmtTransfers(tr []Transfer) string {
	s := "["
	for _, x := range tr {
		s += fmt.Sprintf("{%s %v seen=%s order=%d conf=%v orph=%v cred=%v res=%v} ",
			x.Asset, x.Amount, x.FirstSeen.Format(time.RFC3339Nano), x.Order, x.Confirmed, x.Orphaned, x.Credited, x.Resolved)
	}
	return s + "]"
}
