package intents

import (
	"context"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/matcher"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Redecide decides intent id again in tx, as of now: it locks the intent's
// payable then the intent, asks the matcher about all of the intent's
// transfers and writes the decision (the transfers' classes, the intent's
// state, the payable's paid state, a top-up's credit or its reversal, and
// their events, queued to commit). Deciding an intent that nothing changed
// for writes nothing. The scanner sink calls it for every intent a block,
// tip or rewind touched, and finance after a resolution.
func (s *Service) Redecide(ctx context.Context, tx *store.Tx, id string, now time.Time) error {
	in, err := tx.GetIntent(ctx, id)
	if err != nil {
		return fmt.Errorf("intent %s: %w", id, err)
	}
	p, err := tx.PayableForUpdate(ctx, in.PayableID)
	if err != nil {
		return err
	}
	return s.reevaluateLocked(ctx, tx, p, id, now)
}

// reevaluateLocked applies the matcher with the payable already locked.
// When the decision changes whether the payable is paid, the payable's
// other intents are decided again in the same transaction, so that what
// their transfers mean follows at once (a partial payment of another intent
// becomes a duplicate of a paid payable, for finance; a reverted payer lets
// them count again), not only when something next touches them.
func (s *Service) reevaluateLocked(ctx context.Context, tx *store.Tx, p store.Payable, id string, now time.Time) error {
	return s.decide(ctx, tx, p, id, now, 0)
}

// maxSiblingDepth bounds how often a change of a payable's paid state may
// re-decide its intents within one decision. One level settles it (the
// payer is decided first); the bound only guards against a cycle.
const maxSiblingDepth = 2

// RedecidePayable decides every intent of the payable again in tx, after
// the payable's paid state changed by other means than one of its intents
// (a balance debit paid it): what they received becomes a duplicate for
// finance at once. The caller holds the payable's row lock.
func (s *Service) RedecidePayable(ctx context.Context, tx *store.Tx, payableID int64, now time.Time) error {
	return s.redecideSiblings(ctx, tx, payableID, "", now, 0)
}

// redecideSiblings decides the payable's intents other than except again,
// re-reading the payable (locked by the caller) for its new paid state.
func (s *Service) redecideSiblings(ctx context.Context, tx *store.Tx, payableID int64, except string, now time.Time, depth int) error {
	if depth >= maxSiblingDepth {
		return nil
	}
	ids, err := tx.IntentIDsOfPayable(ctx, payableID)
	if err != nil {
		return err
	}
	for _, sib := range ids {
		if sib == except {
			continue
		}
		p, err := tx.PayableForUpdate(ctx, payableID)
		if err != nil {
			return err
		}
		if err := s.decide(ctx, tx, p, sib, now, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// decision is one intent's matcher decision in the making: what was read
// under the locks, what the matcher decided, and what the steps of decide
// wrote, for the events rendered at the end.
type decision struct {
	p         store.Payable
	in        store.Intent
	all       []store.Transfer // every transfer of the intent, for its view
	trs       []store.Transfer // those the matcher sees (matchable)
	elsewhere bool             // the payable is paid by another intent or a debit
	d         matcher.Decision
	st        store.IntentState
	changed   bool
	classes   map[string]payment.Classification
	voided    map[string]bool
	unmatched []store.Transfer
	ledger    []store.LedgerEntry
}

// decide is reevaluateLocked at a sibling depth: it asks the matcher about
// the intent (locked here, its payable by the caller) and writes the
// decision in order: the transfers' classes, the intent's state, the
// payable and ledger following the paid status, the siblings, then the
// events.
func (s *Service) decide(ctx context.Context, tx *store.Tx, p store.Payable, id string, now time.Time, depth int) error {
	dc, err := s.readDecision(ctx, tx, p, id, now)
	if err != nil {
		return err
	}
	if err := s.writeClasses(ctx, tx, dc, now); err != nil {
		return err
	}
	if err := writeIntentState(ctx, tx, dc, now); err != nil {
		return err
	}
	wasPaid, isPaid := dc.in.Status == payment.IntentPaid, dc.d.Status == payment.IntentPaid
	if err := s.followPaid(ctx, tx, dc, wasPaid, isPaid, now); err != nil {
		return err
	}
	if isPaid != wasPaid {
		if err := s.redecideSiblings(ctx, tx, p.ID, id, now, depth); err != nil {
			return err
		}
	}
	return s.appendDecisionEvents(ctx, tx, dc, now)
}

// readDecision locks and reads the intent and its transfers and asks the
// matcher.
func (s *Service) readDecision(ctx context.Context, tx *store.Tx, p store.Payable, id string, now time.Time) (*decision, error) {
	in, err := tx.IntentForUpdate(ctx, id)
	if err != nil {
		return nil, err
	}
	all, err := tx.TransfersByIntent(ctx, id)
	if err != nil {
		return nil, err
	}
	trs := matchable(all) // balance-check items (package ingest) count only once credited
	mtrs := make([]matcher.Transfer, len(trs))
	for i, t := range trs {
		mtrs[i] = matcher.Transfer{
			Asset: payment.Asset(t.Asset), Amount: t.Amount, FirstSeen: t.FirstSeenAt,
			Confirmed: t.Status == payment.TransferConfirmed, Orphaned: t.Status == payment.TransferOrphaned, Credited: t.Credited,
			// Invariant 7: a finance decision other than credit_intent
			// means the transfer never counts on its own again.
			Resolved: t.Resolution != nil && !t.Credited,
			Previous: t.Classification,
		}
	}
	// Read under the payable's lock, as SetPayablePaid checks it: with it
	// the matcher never decides paid for a second intent of a payable, so
	// that write cannot conflict (invariant 8: no business state stops a
	// scanner).
	elsewhere := p.PaidByEntry != "" || (p.PaidByIntent != "" && p.PaidByIntent != in.ID)
	d := matcher.Decide(matcher.Intent{
		Asset: payment.Asset(in.Asset), Amount: in.Amount, Tolerance: in.Tolerance, DustMin: in.DustMin,
		Deadline: in.ExpiresAt, Status: in.Status, PayablePaidElsewhere: elsewhere,
	}, mtrs, now)
	return &decision{p: p, in: in, all: all, trs: trs, elsewhere: elsewhere, d: d,
		classes: make(map[string]payment.Classification, len(trs)), voided: map[string]bool{}}, nil
}

// writeClasses stores each transfer's new class, voids the credit of a
// transfer credited to an intent whose payable was paid elsewhere, and
// collects the transfers that became a finance item (dc.unmatched).
func (s *Service) writeClasses(ctx context.Context, tx *store.Tx, dc *decision, now time.Time) error {
	for i, t := range dc.trs {
		c := dc.d.Classes[i]
		dc.classes[t.ID] = c
		if c != t.Classification {
			if err := tx.SetClassification(ctx, t.ID, c, now); err != nil {
				return err
			}
		}
		if t.Credited && dc.elsewhere && c == payment.Duplicate {
			// Finance credited it, but the payable was paid by other means
			// before it could pay: a payment for an already paid payable.
			// The decision is void and the transfer a finance item again.
			if err := tx.VoidCredit(ctx, t.ID, "payable "+dc.p.Reference+" was paid by other means before this transfer could pay it", now); err != nil {
				return err
			}
			t.Credited, t.Resolution, t.NotifiedClass = false, nil, ""
			dc.voided[t.ID] = true
			tx.AfterCommit(func() { // logged once written: the transaction may be retried
				s.log.Warn("credited transfer of a payable paid elsewhere: credit void, back to finance",
					"transfer", t.ID, "intent", dc.in.ID, "reference", dc.p.Reference)
			})
		}
		if forFinance(dc.d, c, t) && t.NotifiedClass != c {
			if err := tx.SetNotified(ctx, t.ID, c); err != nil {
				return err
			}
			t.Classification, t.NotifiedClass = c, c
			dc.unmatched = append(dc.unmatched, t)
		}
	}
	return nil
}

// writeIntentState stores the intent's new state when it changed.
func writeIntentState(ctx context.Context, tx *store.Tx, dc *decision, now time.Time) error {
	in, d := dc.in, dc.d
	dc.st = store.IntentState{Status: d.Status, Overpaid: d.Overpaid, Late: d.Late, Received: d.Received,
		ConfirmedSum: d.ConfirmedSum, DetectedAt: in.DetectedAt, PaidAt: in.PaidAt}
	if dc.st.DetectedAt == nil && d.Received.Sign() > 0 {
		dc.st.DetectedAt = &now
	}
	if d.Status == payment.IntentPaid && in.Status != payment.IntentPaid {
		dc.st.PaidAt = &now
	}
	st := dc.st
	dc.changed = st.Status != in.Status || st.Overpaid != in.Overpaid || st.Late != in.Late ||
		st.Received.Cmp(in.Received) != 0 || st.ConfirmedSum.Cmp(in.ConfirmedSum) != 0
	if !dc.changed {
		return nil
	}
	return tx.UpdateIntentState(ctx, in.ID, st, now)
}

// followPaid makes the payable and the ledger follow the paid status: a
// payable paid by the intent (and a top-up credited once), or no longer
// paid (and the credit reversed).
func (s *Service) followPaid(ctx context.Context, tx *store.Tx, dc *decision, wasPaid, isPaid bool, now time.Time) error {
	p, in := dc.p, dc.in
	if isPaid && !wasPaid {
		if err := tx.SetPayablePaid(ctx, p.ID, in.ID, now); err != nil {
			return fmt.Errorf("intent %s paid but payable %s is not payable: %w", in.ID, p.Reference, err)
		}
		if p.Kind == payment.Topup {
			es, err := s.creditOnce(ctx, tx, in, now)
			if err != nil {
				return err
			}
			dc.ledger = append(dc.ledger, es...)
		}
	}
	if wasPaid && !isPaid {
		if err := tx.ClearPayablePaid(ctx, p.ID, in.ID); err != nil {
			return err
		}
		if p.Kind == payment.Topup {
			e, err := s.reverseOnce(ctx, tx, in, now)
			if err != nil {
				return err
			}
			if e != nil {
				dc.ledger = append(dc.ledger, *e)
			}
		}
		tx.AfterCommit(func() { // logged once written: the transaction may be retried
			s.log.Error("paid intent reverted by a reorg", "intent", in.ID, "network", in.Network, "reference", p.Reference)
		})
	}
	return nil
}

// appendDecisionEvents appends the decision's events, last: they take the
// event lock, held until commit. Their bodies are rendered from what this
// transaction decided and wrote, not read back.
func (s *Service) appendDecisionEvents(ctx context.Context, tx *store.Tx, dc *decision, now time.Time) error {
	if len(dc.unmatched) == 0 && !dc.changed && len(dc.ledger) == 0 {
		return nil
	}
	in, id := dc.in, dc.in.ID
	tip, err := tx.NodeHeight(ctx, in.Network)
	if err != nil {
		return err
	}
	for _, t := range dc.unmatched {
		if err := tx.QueueAppendEvent(payment.EventTransferUnmatched, id, t.ID, in.Account, views.TransferOf(t, tip), now); err != nil {
			return err
		}
	}
	if dc.st.Status != in.Status {
		view := s.viewOf(dc.after(), dc.shown(), tip)
		if err := tx.QueueAppendEvent(payment.IntentEvent(dc.st.Status), id, "", in.Account, view, now); err != nil {
			return err
		}
	}
	for _, e := range dc.ledger {
		if err := tx.QueueAppendEvent(payment.LedgerEvent(e.Type), id, "", e.Account, views.LedgerEntryOf(e), now); err != nil {
			return err
		}
	}
	return nil
}

// after is the intent as the decision left it.
func (dc *decision) after() store.Intent {
	after, st := dc.in, dc.st
	after.Status, after.Overpaid, after.Late = st.Status, st.Overpaid, st.Late
	after.Received, after.ConfirmedSum, after.DetectedAt, after.PaidAt = st.Received, st.ConfirmedSum, st.DetectedAt, st.PaidAt
	return after
}

// shown is the intent's transfers as the decision left them.
func (dc *decision) shown() []store.Transfer {
	shown := make([]store.Transfer, len(dc.all))
	for i, t := range dc.all {
		if c, ok := dc.classes[t.ID]; ok {
			t.Classification = c
		}
		if dc.voided[t.ID] {
			t.Credited, t.Resolution = false, nil
		}
		shown[i] = t
	}
	return shown
}

// forFinance reports whether a transfer's classification is a finance item
// now: every class but settles, except that a partial payment is only one
// once its intent stopped waiting for the rest, and a transfer that vanished
// in a reorg only when it had paid the intent (reverted).
func forFinance(d matcher.Decision, c payment.Classification, t store.Transfer) bool {
	if !c.NeedsReview() {
		return false
	}
	if t.Status == payment.TransferOrphaned {
		return c == payment.Reverted
	}
	if c == payment.Partial {
		switch d.Status {
		case payment.IntentAwaiting, payment.IntentDetected:
			return false
		}
	}
	return true
}

// creditOnce credits a paid top-up unless it is already credited (net).
// A re-credit (paid, reverted by a reorg, paid again, through this intent
// or another of the top-up) whose reversal could not take everything back,
// because the customer had spent it, first settles that rest: a recovery
// entry of the intent right after the credit,
// under the same account lock, so the credit never makes the same money
// spendable twice. It returns the entries written, in order.
func (s *Service) creditOnce(ctx context.Context, tx *store.Tx, in store.Intent, now time.Time) ([]store.LedgerEntry, error) {
	n, err := tx.NetIntentCredits(ctx, in.ID)
	if err != nil || n > 0 {
		return nil, err
	}
	e, err := tx.AppendLedger(ctx, store.LedgerEntry{Account: in.Account, Type: payment.EntryCredit, AmountCents: in.AmountCents,
		Reference: in.Reference, IntentID: in.ID}, now)
	if err != nil {
		return nil, err
	}
	out := []store.LedgerEntry{e}
	owed, err := tx.PayableUnrecovered(ctx, in.ID)
	if err != nil || owed <= 0 {
		return out, err
	}
	r, err := tx.AppendLedger(ctx, store.LedgerEntry{Account: in.Account, Type: payment.EntryRecovery, AmountCents: owed,
		Reference: in.Reference, IntentID: in.ID}, now)
	if err != nil {
		return nil, err
	}
	if r.ID != "" {
		out = append(out, r)
		tx.AfterCommit(func() { // logged once written: the transaction may be retried
			s.log.Warn("re-credited top-up settled the rest of its earlier reversal", "account", in.Account,
				"intent", in.ID, "recovered_cents", r.AmountCents, "owed_cents", owed)
		})
	}
	return out, nil
}

// reverseOnce compensates the credit of a reverted top-up, once.
func (s *Service) reverseOnce(ctx context.Context, tx *store.Tx, in store.Intent, now time.Time) (*store.LedgerEntry, error) {
	n, err := tx.NetIntentCredits(ctx, in.ID)
	if err != nil || n <= 0 {
		return nil, err
	}
	e, err := tx.AppendLedger(ctx, store.LedgerEntry{Account: in.Account, Type: payment.EntryReversal, AmountCents: in.AmountCents,
		Reference: in.Reference, IntentID: in.ID}, now)
	if err == nil && e.UnrecoveredCents > 0 {
		tx.AfterCommit(func() { // logged once written: the transaction may be retried
			s.log.Error("reversed top-up exceeded the balance", "account", in.Account, "intent", in.ID,
				"unrecovered_cents", e.UnrecoveredCents)
		})
	}
	return &e, err
}

// Sweep enforces deadlines: every open intent past its deadline is decided
// again (expired or underpaid), each in its own transaction, in batches
// until none is left. It returns how many it looked at.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	const batch = 500
	total := 0
	for {
		ids, err := s.store.DueIntents(ctx, s.now().UTC(), batch)
		if err != nil {
			return total, err
		}
		for _, id := range ids {
			err := s.store.InTx(ctx, func(tx *store.Tx) error { return s.Redecide(ctx, tx, id, s.now().UTC()) })
			if err != nil {
				return total, fmt.Errorf("sweep intent %s: %w", id, err)
			}
		}
		total += len(ids)
		if len(ids) < batch {
			return total, nil
		}
	}
}

// matchable drops the Unexplained items finance has not credited: the
// matcher never counts them, and they keep their classification. It returns
// a new slice: trs (every transfer, for the intent's view) is left as is.
func matchable(trs []store.Transfer) []store.Transfer {
	out := make([]store.Transfer, 0, len(trs))
	for _, t := range trs {
		if t.Classification == payment.Unexplained && !t.Credited {
			continue
		}
		out = append(out, t)
	}
	return out
}
