package matcher

import (
	"math/big"
	"slices"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// Intent is what Decide needs to know about one intent.
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
	// Status is the intent's status before this decision.
	Status payment.IntentStatus
	// PayablePaidElsewhere is true when another intent of the same payable
	// is already paid.
	PayablePaidElsewhere bool
}

// Transfer is what Decide needs to know about one transfer to the intent's
// address.
type Transfer struct {
	// Asset is the asset moved.
	Asset payment.Asset
	// Amount is the amount moved, in base units.
	Amount *big.Int
	// FirstSeen is when the transfer was first seen, in the mempool or in a
	// block.
	FirstSeen time.Time
	// Confirmed is true once the transfer has the method's required
	// confirmations.
	Confirmed bool
	// Orphaned is true when a reorg removed the transfer, or it vanished from
	// the mempool without being mined. An orphaned transfer never counts.
	Orphaned bool
	// Credited is true when finance resolved the transfer with
	// credit_intent: it counts whatever the deadline, the intent's status or
	// the dust minimum (but never in another asset, nor once the payable was
	// paid by another intent or a balance debit).
	Credited bool
	// Resolved is true when finance decided on the transfer with anything
	// but credit_intent (refunded, ignore, credit_account): the money was
	// dealt with outside the intent, so the transfer never counts toward it
	// on its own again (DESIGN.md invariant 7). It keeps its class, except
	// that an overpaying transfer whose surplus finance resolved still pays
	// the intent.
	Resolved bool
	// Previous is the transfer's classification from the last decision, ""
	// for a transfer not classified yet.
	Previous payment.Classification
}

// Decision is the outcome of Decide.
type Decision struct {
	// Status is the intent's new status.
	Status payment.IntentStatus
	// Overpaid is true when the paying set sums above the intent's amount.
	Overpaid bool
	// Late is true when at least one transfer that still exists (not
	// orphaned) is classified Late.
	Late bool
	// Received is the sum of the transfers classified Settles, Overpaid or
	// Partial that still exist (not orphaned). Never nil.
	Received *big.Int
	// ConfirmedSum is the confirmed part of Received. Never nil.
	ConfirmedSum *big.Int
	// Surplus is the paying set's sum minus the intent's amount when
	// Overpaid, else 0. Never nil.
	Surplus *big.Int
	// Classes holds one classification per input transfer, in input order.
	Classes []payment.Classification
}

// zero stands in for nil amounts. It is only ever read.
var zero big.Int

// smallN is the number of transfers whose classes fit in a decision's
// scratch block; maxStackOrder is how many a decision orders without
// allocating.
const (
	smallN        = 4
	maxStackOrder = 16
)

// scratch is the memory of one decision, allocated at once: the three result
// integers, word storage for values up to 256 bits so that arithmetic on them
// does not allocate, and the classes of up to smallN transfers. The results
// point into it, so each decision owns its own.
type scratch struct {
	ints    [3]big.Int
	words   [3][4]big.Word
	classes [smallN]payment.Classification
}

// Decide classifies every transfer to the intent's address and computes the
// intent's new status at time now. The rules, applied to each transfer in
// this order:
//
//  1. Orphaned: it does not count. Its class becomes Reverted when it had
//     paid the intent (Previous is Settles or Overpaid and the intent was, or
//     now is, paid, or was reverted); otherwise it keeps Previous (Reverted
//     when Previous is empty).
//  2. Another asset than the intent's: WrongAsset, even when Credited.
//  3. Credited: Duplicate when the payable was paid by another intent or a
//     balance debit (a payable is paid at most once); otherwise it counts
//     (rule 9) whatever the rules below say.
//  4. Resolved (finance decided without credit_intent): it never counts on
//     its own again and keeps Previous when that is Late, Duplicate or Dust
//     (Partial stays Partial but counts for nothing; anything else is
//     Duplicate), except that a transfer that paid
//     (Previous Overpaid, or Settles) still pays: finance resolved its
//     surplus. It pays only within a complete paying set; when the set is
//     incomplete it is walked out again and stays Partial, counting for
//     nothing.
//  5. Amount zero or below DustMin: Dust.
//     Already Duplicate while the payable is paid by other means: Duplicate
//     (a voided credit keeps the class it was given, whatever its timing).
//  6. First seen after the deadline: Late (first seen exactly at the
//     deadline counts).
//  7. Intent superseded, or already classified Late: Late.
//  8. Payable paid by another intent (or a balance debit): Duplicate.
//  9. Otherwise the transfer counts. Counting transfers, in FirstSeen order,
//     form the paying set until their sum reaches Amount − Tolerance (at
//     least 1); they are Settles, except that the last one is Overpaid when
//     the set's sum exceeds Amount. Those after are Duplicate. When the sum
//     is never reached, every counting transfer is Partial.
//     A paid intent keeps its paying set (DESIGN.md invariant 6): while
//     every transfer it last classified Settles or Overpaid still counts,
//     is confirmed and together they cover the amount, those transfers are
//     walked first, so any other transfer, whatever its FirstSeen, is
//     Duplicate. Only when one of them leaves the chain is the set
//     recomputed in FirstSeen order.
//
// Status: paid when the paying set is complete and all of it confirmed;
// else reverted when the intent was paid or reverted; else superseded when
// it was superseded; else, when something counts, detected (underpaid when
// the set is incomplete and the deadline has passed); else a detected
// intent whose payments are now duplicates only because the payable was
// paid elsewhere stays detected until the deadline (its payment did not
// vanish); else expired past the deadline, awaiting_payment before it.
func Decide(in Intent, transfers []Transfer, now time.Time) Decision {
	n := len(transfers)
	s := new(scratch)
	for i := range s.ints {
		s.ints[i].SetBits(s.words[i][:0])
	}
	// Received is the running sum of the counting transfers, and so the
	// paying set's sum; Surplus holds the required amount until the end.
	sum, confirmed, surplus := &s.ints[0], &s.ints[1], &s.ints[2]
	required := surplus

	var classes []payment.Classification
	if n <= smallN {
		classes = s.classes[:n]
	} else {
		classes = make([]payment.Classification, n)
	}
	d := Decision{Received: sum, ConfirmedSum: confirmed, Surplus: surplus, Classes: classes}

	amount := orZero(in.Amount)
	dustMin := orZero(in.DustMin)
	wasPaid := in.Status == payment.IntentPaid || in.Status == payment.IntentReverted

	// Rules 2 to 8. Transfers that count keep the empty class for now;
	// orphaned ones get theirs once the status is known (rule 1).
	counting, elsewhere, resolvedPayer := 0, 0, false
	for i := range transfers {
		t := &transfers[i]
		if t.Orphaned {
			continue
		}
		c := classify(&in, t, dustMin)
		classes[i] = c
		switch {
		case c == "":
			counting++
			resolvedPayer = resolvedPayer || (t.Resolved && !t.Credited)
		case c == payment.Duplicate && in.PayablePaidElsewhere:
			elsewhere++
		}
	}

	// Rule 9: walk the counting transfers in FirstSeen order, a paid
	// intent's own paying set first.
	required.Sub(amount, orZero(in.Tolerance))
	if required.Sign() < 1 {
		required.SetInt64(1)
	}
	complete, allConfirmed, last := false, true, -1
	var buf, kept [maxStackOrder]int
	for pass := 0; counting > 0; pass++ {
		order := visitOrder(transfers, buf[:0])
		if in.Status == payment.IntentPaid && keepsPayingSet(transfers, classes, required) {
			order = payersFirst(transfers, order, kept[:0])
		}
		for _, i := range order {
			if classes[i] != "" || transfers[i].Orphaned {
				continue
			}
			if complete {
				classes[i] = payment.Duplicate
				continue
			}
			t := &transfers[i]
			classes[i] = payment.Partial
			sum.Add(sum, t.Amount)
			if t.Confirmed {
				confirmed.Add(confirmed, t.Amount)
			} else {
				allConfirmed = false
			}
			if sum.Cmp(required) >= 0 {
				complete, last = true, i
			}
		}
		if complete || pass > 0 || !resolvedPayer {
			break
		}
		// Incomplete: a resolved transfer pays only within a complete set,
		// so walk again without it (rule 4).
		sum.SetInt64(0)
		confirmed.SetInt64(0)
		allConfirmed = true
		for i, c := range classes {
			if c != payment.Partial {
				continue
			}
			if t := &transfers[i]; t.Resolved && !t.Credited {
				classes[i] = heldPartial
				counting--
			} else {
				classes[i] = ""
			}
		}
	}
	surplus.SetInt64(0) // required is no longer needed
	if complete {
		for i, c := range classes {
			if c == payment.Partial {
				classes[i] = payment.Settles // orphaned transfers have no class yet
			}
		}
		if sum.Cmp(amount) > 0 {
			classes[last] = payment.Overpaid
			d.Overpaid = true
			surplus.Sub(sum, amount)
		}
	}

	switch {
	case complete && allConfirmed:
		d.Status = payment.IntentPaid
	case wasPaid:
		d.Status = payment.IntentReverted
	case in.Status == payment.IntentSuperseded:
		d.Status = payment.IntentSuperseded
	case complete:
		d.Status = payment.IntentDetected
	case counting > 0 && now.After(in.Deadline):
		d.Status = payment.IntentUnderpaid
	case counting > 0:
		d.Status = payment.IntentDetected
	case elsewhere > 0 && in.Status == payment.IntentDetected && !now.After(in.Deadline):
		// Its payment is on its way but the payable was paid by other
		// means: the payment is a duplicate for finance, and nothing
		// vanished (awaiting_payment would announce that it did).
		d.Status = payment.IntentDetected
	case now.After(in.Deadline):
		d.Status = payment.IntentExpired
	default:
		d.Status = payment.IntentAwaiting
	}

	// Rule 1, and the Late flag, which only looks at transfers that exist.
	for i := range transfers {
		t := &transfers[i]
		switch {
		case !t.Orphaned:
			switch classes[i] {
			case payment.Late:
				d.Late = true
			case heldPartial:
				classes[i] = payment.Partial
			}
		case (t.Previous == payment.Settles || t.Previous == payment.Overpaid) && (wasPaid || d.Status == payment.IntentPaid):
			// It had paid the intent (or, when another transfer pays it now,
			// would be taken for one of its payers at the next decision).
			classes[i] = payment.Reverted
		case t.Previous == "":
			classes[i] = payment.Reverted
		default:
			classes[i] = t.Previous
		}
	}
	return d
}

// heldPartial marks, during a decision, a resolved transfer that keeps the
// class Partial but does not count; it never leaves Decide.
const heldPartial payment.Classification = "partial (resolved)"

// classify applies rules 2 to 8 to a transfer that is not orphaned. It
// returns "" when the transfer counts.
func classify(in *Intent, t *Transfer, dustMin *big.Int) payment.Classification {
	switch {
	case t.Asset != in.Asset:
		return payment.WrongAsset
	case t.Amount == nil || t.Amount.Sign() < 0:
		return payment.Dust // malformed: never counts, even when credited
	case t.Credited && in.PayablePaidElsewhere:
		// A payable is paid at most once: a credit that comes too late to
		// pay it is a duplicate for finance, never a second payment.
		return payment.Duplicate
	case t.Credited:
		return ""
	case t.Resolved && (t.Previous == payment.Overpaid || t.Previous == payment.Settles):
		if in.PayablePaidElsewhere {
			return payment.Duplicate
		}
		return "" // its surplus was resolved; what it paid still pays
	case t.Resolved && t.Previous == payment.Partial:
		return heldPartial
	case t.Resolved && (t.Previous == payment.Late || t.Previous == payment.Duplicate || t.Previous == payment.Dust):
		return t.Previous
	case t.Resolved:
		// No class yet, or one it cannot keep in the chain in this asset
		// (reverted: it left the chain and came back).
		return payment.Duplicate
	case t.Amount.Sign() == 0 || t.Amount.Cmp(dustMin) < 0:
		return payment.Dust
	case t.Previous == payment.Duplicate && in.PayablePaidElsewhere:
		// A duplicate of a payable paid by other means stays one while it
		// is paid so: a voided credit (rule 3) keeps the class it was given
		// when the credit was voided, however often it is decided again.
		return payment.Duplicate
	case t.FirstSeen.After(in.Deadline):
		return payment.Late
	case in.Status == payment.IntentSuperseded || t.Previous == payment.Late:
		// Lateness, once decided, stays: a transfer sent to a superseded
		// intent that finance later pays with another transfer must not
		// start counting and displace the credited one.
		return payment.Late
	case in.PayablePaidElsewhere:
		return payment.Duplicate
	}
	return ""
}

// keepsPayingSet reports whether a paid intent's paying set still holds
// (rule 9): at least one transfer was last classified Settles or Overpaid,
// and every such transfer still counts (classes[i] is empty, so it is not
// orphaned), is confirmed, and together they reach required.
func keepsPayingSet(transfers []Transfer, classes []payment.Classification, required *big.Int) bool {
	var sum big.Int
	n := 0
	for i := range transfers {
		t := &transfers[i]
		if t.Previous != payment.Settles && t.Previous != payment.Overpaid {
			continue
		}
		if t.Orphaned || classes[i] != "" || !t.Confirmed {
			return false
		}
		sum.Add(&sum, t.Amount)
		n++
	}
	return n > 0 && sum.Cmp(required) >= 0
}

// payersFirst reorders order (FirstSeen order) so that the transfers last
// classified Settles or Overpaid come first, each group keeping its order,
// in buf when it is large enough.
func payersFirst(transfers []Transfer, order, buf []int) []int {
	out := buf[:0]
	if len(order) > cap(buf) {
		out = make([]int, 0, len(order))
	}
	for _, i := range order {
		if p := transfers[i].Previous; p == payment.Settles || p == payment.Overpaid {
			out = append(out, i)
		}
	}
	for _, i := range order {
		if p := transfers[i].Previous; p != payment.Settles && p != payment.Overpaid {
			out = append(out, i)
		}
	}
	return out
}

// visitOrder returns the transfer indices in FirstSeen order, ties in input
// order, in buf when it is large enough. It sorts only when the input is not
// already in that order.
func visitOrder(transfers []Transfer, buf []int) []int {
	n := len(transfers)
	order := buf[:0]
	if n > cap(buf) {
		order = make([]int, 0, n)
	}
	sorted := true
	for i := range n {
		order = append(order, i)
		if i > 0 && transfers[i].FirstSeen.Before(transfers[i-1].FirstSeen) {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(order, func(a, b int) int {
			return transfers[a].FirstSeen.Compare(transfers[b].FirstSeen)
		})
	}
	return order
}

// orZero returns x, or zero when x is nil.
func orZero(x *big.Int) *big.Int {
	if x == nil {
		return &zero
	}
	return x
}
