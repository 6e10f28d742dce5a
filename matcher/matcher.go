package matcher

import (
	"cmp"
	"math/big"
	"slices"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// Intent is what Decide knows about one intent: facts, never an earlier
// decision.
type Intent struct {
	// Asset is the asset the intent asks for.
	Asset payment.Asset
	// Amount is the exact amount asked, in base units (> 0).
	Amount *big.Int
	// Tolerance is the underpayment tolerance in base units; nil means 0.
	Tolerance *big.Int
	// DustMin is the dust threshold: a transfer below it is Dust; nil means
	// 0. A zero amount is always dust.
	DustMin *big.Int
	// Deadline is the last instant a transfer may be first seen and count.
	Deadline time.Time
	// Superseded is true once the intent was renewed: a newer intent
	// replaced it, so only what finance credits to it can pay it.
	Superseded bool
	// WasPaid is true when the intent was paid at some time (the storefront
	// was told so): not paid now, it is reverted.
	WasPaid bool
	// PaidElsewhere is true when the payable is paid by another intent or a
	// balance debit.
	PaidElsewhere bool
	// Held is true when another intent of the payable completed its payment
	// first and that payment is still in progress: this intent's payment,
	// complete or not, does not pay the payable while the other may.
	Held bool
}

// Transfer is what Decide knows about one transfer to the intent's address
// (or credited to the intent): facts, never an earlier decision.
type Transfer struct {
	// Asset is the asset moved.
	Asset payment.Asset
	// Amount is the amount moved, in base units.
	Amount *big.Int
	// FirstSeen is when the transfer was first seen, in the mempool or in a
	// block: what the deadline is checked against.
	FirstSeen time.Time
	// Order is where the transfer stands in the order paywatch recorded
	// transfers, or, credited to the intent by finance, where the credit
	// stands in it (one sequence for both): counting transfers add up in
	// this order (ties in input order), and a payable's first complete
	// payment is the one completed first in it.
	Order int64
	// Confirmed is true once the transfer has its required confirmations.
	Confirmed bool
	// Orphaned is true when a reorg removed the transfer, or it vanished from
	// the mempool unmined. An orphaned transfer never counts.
	Orphaned bool
	// Credited is true when finance credited the transfer to this intent
	// (credit_intent): it counts whatever the deadline, the dust minimum or
	// a renewal, but never in another asset nor once the payable was paid
	// by other means.
	Credited bool
	// Resolved is the part of the amount finance decided on otherwise
	// (refunded, ignored, credited to an account), in base units; nil
	// means 0. That part never counts toward the intent (docs/behaviour.md
	// invariant 7): a transfer resolved whole counts for nothing, one whose
	// surplus was resolved counts with the rest.
	Resolved *big.Int
}

// Decision is the outcome of Decide.
type Decision struct {
	// Status is the intent's status.
	Status payment.IntentStatus
	// Complete is true when the paying set reaches the amount (minus the
	// tolerance), confirmed or not.
	Complete bool
	// Overpaid is true when a transfer of the paying set moved more than
	// the part of it that pays the intent (a surplus, resolved or not).
	Overpaid bool
	// Late is true when a transfer that is on the chain (or in the mempool)
	// is classified Late.
	Late bool
	// Received is the sum of what counts for the intent (the counted parts
	// of the transfers classified Settles, Overpaid or Partial). Never nil.
	Received *big.Int
	// ConfirmedSum is the confirmed part of Received. Never nil.
	ConfirmedSum *big.Int
	// Surplus is the part of Received above the amount: the paying set's
	// surplus finance has not decided on yet. Never nil.
	Surplus *big.Int
	// Classes holds one classification per input transfer, in input order.
	Classes []payment.Classification
	// Completed is the Order of the transfer that completed the paying set
	// (0 when the set is not complete).
	Completed int64
	// Settled holds, per input transfer, the part of its amount that pays
	// the intent: all of what counts of a Settles transfer, what the amount
	// still needed of an Overpaid one, 0 for any other. Never nil.
	Settled []*big.Int
}

// zero stands in for nil amounts. It is only ever read.
var zero big.Int

// Decide classifies every transfer to the intent and computes the intent's
// status at time now, from facts alone: the rules of the package
// documentation, in order.
func Decide(in Intent, transfers []Transfer, now time.Time) Decision {
	d := decideOn(in, transfers, now, func(t *Transfer) bool { return !t.Orphaned })
	if slices.ContainsFunc(transfers, func(t Transfer) bool { return t.Orphaned }) {
		oc := orphanedClasses(in, transfers, now, d.Status)
		for i := range transfers {
			if transfers[i].Orphaned {
				d.Classes[i] = oc[i]
			}
		}
	}
	return d
}

// orphanedClasses applies rule 10: an orphaned transfer's class is the one
// it would have on the chain, except that one that would pay an intent
// that is, or once was, paid is Reverted.
func orphanedClasses(in Intent, transfers []Transfer, now time.Time, status payment.IntentStatus) []payment.Classification {
	all := decideOn(in, transfers, now, func(*Transfer) bool { return true })
	for i, c := range all.Classes {
		if transfers[i].Orphaned && (c == payment.Settles || c == payment.Overpaid) && (in.WasPaid || status == payment.IntentPaid) {
			all.Classes[i] = payment.Reverted
		}
	}
	return all.Classes
}

// decideOn decides the intent over the transfers that present reports as
// on the chain or in the mempool; the others are left unclassified, with
// nothing settled.
func decideOn(in Intent, transfers []Transfer, now time.Time, present func(*Transfer) bool) Decision {
	n := len(transfers)
	d := Decision{Received: new(big.Int), ConfirmedSum: new(big.Int), Surplus: new(big.Int),
		Classes: make([]payment.Classification, n), Settled: make([]*big.Int, n)}
	counted := make([]*big.Int, n)
	gone := make([]bool, n)
	for i := range transfers {
		d.Settled[i] = new(big.Int)
		counted[i] = &zero
		gone[i] = !present(&transfers[i])
	}
	// Rules 1 to 8, each transfer on its own.
	counting, elsewhere := 0, 0
	for i := range transfers {
		t := &transfers[i]
		if gone[i] {
			continue
		}
		c, part := classify(&in, t)
		d.Classes[i], counted[i] = c, part
		switch {
		case c == "":
			counting++
		case c == payment.Duplicate && in.PaidElsewhere && !t.Credited:
			elsewhere++
		}
	}
	// Rule 8: a transfer decided on whole is a duplicate when, counted
	// whole, the paying set would be complete (it paid for something that
	// was paid, or would be), and partial otherwise.
	var decidedWhole paying
	if slices.Contains(d.Classes, resolvedWhole) {
		hc, hcounted := slices.Clone(d.Classes), slices.Clone(counted)
		for i, c := range hc {
			if c == resolvedWhole {
				hc[i], hcounted[i] = "", transfers[i].Amount
			}
		}
		decidedWhole = payingSet(&in, transfers, hc, hcounted, gone)
	}
	// Rule 9: the paying set, in the order the transfers were recorded.
	set := payingSet(&in, transfers, d.Classes, counted, gone)
	d.Complete, d.Completed = set.complete, set.completed
	for _, i := range order(transfers) {
		c := d.Classes[i]
		if gone[i] {
			continue
		}
		switch {
		case c == "" && set.member[i]:
			d.Classes[i] = payment.Settles
			d.Settled[i].Set(set.settled[i])
			if transfers[i].Amount.Cmp(d.Settled[i]) > 0 {
				d.Classes[i] = payment.Overpaid
				d.Overpaid = true
			}
		case c == "" && set.complete:
			d.Classes[i] = payment.Duplicate
			continue
		case c == "":
			d.Classes[i] = payment.Partial
		case c == resolvedWhole:
			// Rule 8: decided by finance, it counts for nothing.
			if decidedWhole.complete {
				d.Classes[i] = payment.Duplicate
			} else {
				d.Classes[i] = payment.Partial
			}
			continue
		default:
			if c == payment.Late {
				d.Late = true
			}
			continue
		}
		d.Received.Add(d.Received, counted[i])
		if transfers[i].Confirmed {
			d.ConfirmedSum.Add(d.ConfirmedSum, counted[i])
		}
	}
	if excess := new(big.Int).Sub(d.Received, orZero(in.Amount)); set.complete && excess.Sign() > 0 {
		d.Surplus = excess
	}
	d.Status = status(&in, set, counting, elsewhere, now)
	return d
}

// resolvedWhole marks, during a decision, a transfer finance decided on
// whole (rule 8); it never leaves decideOn.
const resolvedWhole payment.Classification = "resolved"

// classify applies rules 1 to 8 to a transfer on the chain. It returns ""
// and the part that counts when the transfer counts (rule 9 decides how),
// or its class (resolvedWhole for rule 8).
func classify(in *Intent, t *Transfer) (payment.Classification, *big.Int) {
	if t.Asset != in.Asset {
		return payment.WrongAsset, &zero // rule 1, even when credited
	}
	if t.Amount == nil || t.Amount.Sign() < 0 {
		return payment.Dust, &zero // rule 2: malformed, never counts, even when credited
	}
	part := new(big.Int).Sub(t.Amount, orZero(t.Resolved))
	if t.Credited {
		if in.PaidElsewhere {
			// Rule 3: a payable is paid at most once, so a credit that
			// comes too late to pay it is a duplicate, never a second
			// payment.
			return payment.Duplicate, &zero
		}
	} else if c := uncredited(in, t); c != "" {
		return c, &zero // rules 4 to 7
	}
	if part.Sign() <= 0 {
		return resolvedWhole, &zero // rule 8
	}
	return "", part // it counts
}

// uncredited applies rules 4 to 7, which a credit_intent overrides: dust,
// lateness, a renewal, a payable paid by other means.
func uncredited(in *Intent, t *Transfer) payment.Classification {
	switch {
	case t.Amount.Sign() == 0 || t.Amount.Cmp(orZero(in.DustMin)) < 0:
		return payment.Dust // rule 4
	case t.FirstSeen.After(in.Deadline):
		return payment.Late // rule 5 (first seen exactly at the deadline counts)
	case in.Superseded:
		return payment.Late // rule 6
	case in.PaidElsewhere:
		return payment.Duplicate // rule 7
	}
	return ""
}

// paying is the paying set of rule 9.
type paying struct {
	member   []bool
	settled  []*big.Int
	complete bool
	// completed is the Order of the member that completed the set.
	completed int64
	// confirmed is true when every member is confirmed.
	confirmed bool
}

// payingSet walks the counting transfers in the order they were recorded,
// adding up their counted parts until they reach Amount − Tolerance (at
// least 1): those are the paying set; each settles what counts of it,
// except the last, which settles what the amount still needed.
func payingSet(in *Intent, transfers []Transfer, classes []payment.Classification, counted []*big.Int, gone []bool) paying {
	n := len(transfers)
	p := paying{member: make([]bool, n), settled: make([]*big.Int, n), confirmed: true}
	amount := orZero(in.Amount)
	required := new(big.Int).Sub(amount, orZero(in.Tolerance))
	if required.Sign() < 1 {
		required.SetInt64(1)
	}
	sum := new(big.Int)
	for _, i := range order(transfers) {
		if classes[i] != "" || gone[i] || p.complete {
			continue
		}
		p.member[i] = true
		need := new(big.Int).Sub(amount, sum)
		if need.Sign() < 0 {
			need.SetInt64(0)
		}
		p.settled[i] = new(big.Int).Set(counted[i])
		if p.settled[i].Cmp(need) > 0 {
			p.settled[i].Set(need)
		}
		sum.Add(sum, counted[i])
		p.confirmed = p.confirmed && transfers[i].Confirmed
		if sum.Cmp(required) >= 0 {
			p.complete, p.completed = true, transfers[i].Order
		}
	}
	if !p.complete {
		// Nothing settles before the set is complete: its members are
		// partial payments.
		for i := range p.member {
			p.member[i] = false
		}
		p.confirmed = false
	}
	return p
}

// status applies the status rules in order.
func status(in *Intent, set paying, counting, elsewhere int, now time.Time) payment.IntentStatus {
	late := now.After(in.Deadline)
	switch {
	case set.complete && set.confirmed && !in.Held && !in.PaidElsewhere:
		return payment.IntentPaid
	case in.WasPaid:
		return payment.IntentReverted
	case in.Superseded:
		return payment.IntentSuperseded
	case set.complete:
		return payment.IntentDetected // confirming, or held behind another intent's payment
	case counting > 0 && late:
		return payment.IntentUnderpaid
	case counting > 0:
		return payment.IntentDetected
	case elsewhere > 0 && !late:
		// Its payment is on the chain in time, but the payable was paid by
		// other means: a duplicate for finance, and nothing vanished
		// (awaiting_payment would announce that it did).
		return payment.IntentDetected
	case late:
		return payment.IntentExpired
	}
	return payment.IntentAwaiting
}

// order returns the transfer indices in Order, ties in input order.
func order(transfers []Transfer) []int {
	out := make([]int, len(transfers))
	sorted := true
	for i := range transfers {
		out[i] = i
		if i > 0 && transfers[i].Order < transfers[i-1].Order {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(transfers[a].Order, transfers[b].Order) })
	}
	return out
}

// orZero returns x, or zero when x is nil.
func orZero(x *big.Int) *big.Int {
	if x == nil {
		return &zero
	}
	return x
}

// Payable is what DecidePayable knows about a payable besides its intents.
type Payable struct {
	// PaidByDebit is true when a balance debit paid the payable.
	PaidByDebit bool
	// Payer is the index of the intent that paid the payable so far, -1 for
	// none. The storefront was told it is paid: it stays the payer while
	// its own payment holds, whatever else arrives (docs/behaviour.md invariant 6).
	Payer int
}

// DecidePayable decides every intent of one payable together, so that the
// payable is paid at most once and each intent's decision already knows
// how the others came out (Intent.PaidElsewhere and Held are set here,
// whatever the caller passed):
//
//   - a payable paid by a balance debit: every intent's payment is a
//     duplicate;
//   - the payer so far is still paid on its own: it stays the payer, the
//     others are paid elsewhere;
//   - otherwise the intent whose payment was completed first (Completed,
//     then the intents' order) pays: once its payment is confirmed it is
//     the new payer and the others are paid elsewhere; while it is not,
//     the others are held behind it (their complete payments wait).
//
// It returns the payer (-1 for none) and one decision per intent, in
// order. transfers[i] are intents[i]'s transfers.
func DecidePayable(p Payable, intents []Intent, transfers [][]Transfer, now time.Time) (int, []Decision) {
	ds := make([]Decision, len(intents))
	with := func(elsewhere, held func(i int) bool) {
		for i, in := range intents {
			in.PaidElsewhere, in.Held = elsewhere(i), held(i)
			ds[i] = Decide(in, transfers[i], now)
		}
	}
	never := func(int) bool { return false }
	if p.PaidByDebit {
		with(func(int) bool { return true }, never)
		return -1, ds
	}
	with(never, never)
	payer := -1
	if p.Payer >= 0 && p.Payer < len(ds) && ds[p.Payer].Status == payment.IntentPaid {
		payer = p.Payer
	} else {
		first := -1
		for i, d := range ds {
			if d.Complete && (first < 0 || d.Completed < ds[first].Completed) {
				first = i
			}
		}
		if first < 0 {
			return -1, ds
		}
		if ds[first].Status != payment.IntentPaid {
			with(never, func(i int) bool { return i != first })
			return -1, ds
		}
		payer = first
	}
	with(func(i int) bool { return i != payer }, never)
	return payer, ds
}
