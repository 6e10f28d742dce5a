package checkout

import (
	"math/big"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// Phase is what the customer is told about their payment: each has its own
// words and next step.
type Phase string

// The phases of a payment page.
const (
	// Waiting: nothing arrived yet; pay before the deadline.
	Waiting Phase = "waiting"
	// Confirming: the whole amount is on the network, not yet with every
	// confirmation ("n of N").
	Confirming Phase = "confirming"
	// Underpaid: part of the amount arrived before the deadline; the same
	// address takes the rest until then.
	Underpaid Phase = "underpaid"
	// Paid: paid and confirmed.
	Paid Phase = "paid"
	// Expired: the deadline passed and nothing arrived.
	Expired Phase = "expired"
	// Review: money arrived that does not pay the intent (after the deadline,
	// short at the deadline, in another asset, for an order already paid):
	// it is with the shop for review, never lost.
	Review Phase = "review"
	// Renewed: the storefront replaced the intent by a newer one.
	Renewed Phase = "renewed"
	// Reverted: the network reorganised away a payment that had paid.
	Reverted Phase = "reverted"
)

// Reason says why a payment is in Review, and what a note is about.
type Reason string

// The reasons of Review and of notes.
const (
	ReasonLate       Reason = "late"
	ReasonShort      Reason = "short"
	ReasonWrongAsset Reason = "wrong_asset"
	ReasonDuplicate  Reason = "duplicate"
	ReasonOverpaid   Reason = "overpaid"
)

// Note is a second thing the page says beside its phase: money that is
// with the shop for review (the surplus of an overpayment, a transfer in
// another asset, one after the deadline).
type Note struct {
	Reason Reason
	// Amount is how much, in the asset of Asset (a decimal string).
	Amount string
	// Asset is the asset's symbol.
	Asset string
}

// State is the page's state of one intent at one time: a pure function of
// the intent's view and the time (StateOf).
type State struct {
	Phase  Phase
	Reason Reason // of Review
	// Open is true while the address takes payment for this intent: the
	// instructions (amount, address, QR, countdown) are shown.
	Open bool
	// Confirmations is the fewest confirmations among the paying
	// transfers, of Required (0: the network's finality); Pending is true
	// while one of them is not in a block yet.
	Confirmations int64
	Required      int
	Pending       bool
	// Received and Missing are what counts toward the amount and what is
	// still missing, in the intent's asset (decimal strings). In Review
	// (but for a short payment) Received is what arrived for the reason,
	// in Asset.
	Received string
	Missing  string
	Asset    string
	// Notes are the money with the shop for review beside the phase.
	Notes []Note
	// Reported is true once the customer said they paid.
	Reported bool
	// CanReport is true when the page offers "I have paid".
	CanReport bool
}

// StateOf returns the page's state of intent v at now.
func StateOf(v views.Intent, now time.Time) State {
	m, _ := payment.LookupMethod(payment.Method(v.Method))
	dec := m.Decimals
	amount := units(v.AmountBaseUnits)
	received := units(v.ReceivedBaseUnits)
	s := State{Reported: v.ReportedAt != nil, Required: v.ConfirmationsRequired, Received: payment.TrimUnits(received, dec), Asset: m.Symbol}
	if d := new(big.Int).Sub(amount, received); d.Sign() > 0 {
		s.Missing = payment.TrimUnits(d, dec)
	}
	beforeDeadline := !now.After(v.ExpiresAt)

	// What arrived and does not pay: by reason, summed per asset.
	review := map[Reason][]*heldAmount{}
	paying, partial := false, false
	minConf := int64(-1)
	for _, t := range v.Transfers {
		if t.Status == payment.TransferOrphaned {
			continue
		}
		switch t.Classification {
		case payment.Settles, payment.Overpaid:
			paying = true
			if t.BlockHeight == nil {
				s.Pending = true
			}
			if minConf < 0 || t.Confirmations < minConf {
				minConf = t.Confirmations
			}
		case payment.Partial:
			partial = true
		case payment.Late, payment.WrongAsset, payment.Duplicate:
			r := Reason(t.Classification)
			sym, d := symbolOf(t.Network, t.Asset), views.Decimals(t.Network, t.Asset)
			var h *heldAmount
			for _, x := range review[r] {
				if x.symbol == sym {
					h = x
				}
			}
			if h == nil {
				h = &heldAmount{sum: new(big.Int), symbol: sym, dec: d}
				review[r] = append(review[r], h)
			}
			h.sum.Add(h.sum, units(t.AmountBaseUnits))
		}
	}
	if minConf > 0 {
		s.Confirmations = minConf
	}
	note := func(r Reason) {
		for _, h := range review[r] {
			s.Notes = append(s.Notes, Note{Reason: r, Amount: payment.TrimUnits(h.sum, h.dec), Asset: h.symbol})
		}
	}

	switch v.Status {
	case payment.IntentPaid:
		s.Phase = Paid
		if v.Overpaid {
			if sur := new(big.Int).Sub(received, amount); sur.Sign() > 0 {
				s.Notes = append(s.Notes, Note{Reason: ReasonOverpaid, Amount: payment.TrimUnits(sur, dec), Asset: m.Symbol})
			}
		}
		note(ReasonDuplicate)
		note(ReasonLate)
		note(ReasonWrongAsset)
	case payment.IntentSuperseded:
		s.Phase = Renewed
		note(ReasonLate)
		note(ReasonWrongAsset)
		note(ReasonDuplicate)
	case payment.IntentReverted:
		s.Phase = Reverted
	case payment.IntentUnderpaid:
		s.Phase, s.Reason = Review, ReasonShort
		note(ReasonLate)
		note(ReasonWrongAsset)
	case payment.IntentExpired:
		switch {
		case review[ReasonLate] != nil:
			s.Phase, s.Reason = Review, ReasonLate
			note(ReasonWrongAsset)
		case review[ReasonWrongAsset] != nil:
			s.Phase, s.Reason = Review, ReasonWrongAsset
		case review[ReasonDuplicate] != nil:
			s.Phase, s.Reason = Review, ReasonDuplicate
		default:
			s.Phase = Expired
		}
	default: // awaiting_payment, detected: the deadline decides
		switch {
		case paying:
			s.Phase = Confirming
			note(ReasonWrongAsset)
		case partial && beforeDeadline:
			s.Phase, s.Open, s.CanReport = Underpaid, true, true
			note(ReasonWrongAsset)
		case partial:
			s.Phase, s.Reason = Review, ReasonShort
		case review[ReasonDuplicate] != nil:
			// The order was paid by other means while this payment came.
			s.Phase, s.Reason = Review, ReasonDuplicate
		case review[ReasonWrongAsset] != nil:
			s.Phase, s.Reason = Review, ReasonWrongAsset
			s.Open, s.CanReport = beforeDeadline, beforeDeadline
		case review[ReasonLate] != nil:
			s.Phase, s.Reason = Review, ReasonLate
		case beforeDeadline:
			s.Phase, s.Open, s.CanReport = Waiting, true, true
		default:
			s.Phase = Expired
		}
	}
	if s.Phase == Review && s.Reason != ReasonShort {
		// What arrived for the reason itself is in the phase's words.
		held := review[s.Reason]
		s.Received, s.Asset = payment.TrimUnits(held[0].sum, held[0].dec), held[0].symbol
		for _, h := range held[1:] {
			s.Notes = append(s.Notes, Note{Reason: s.Reason, Amount: payment.TrimUnits(h.sum, h.dec), Asset: h.symbol})
		}
	}
	return s
}

// symbolOf names the asset of a transfer for the customer: its method's
// symbol when one takes it, else the asset's name.
func symbolOf(network, asset string) string {
	if m, ok := payment.MethodFor(payment.Network(network), payment.Asset(asset)); ok {
		return m.Symbol
	}
	return asset
}

// heldAmount is money of one asset with the shop for review.
type heldAmount struct {
	sum    *big.Int
	symbol string
	dec    int
}

func units(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return v
}
