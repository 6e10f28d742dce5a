package intents

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/paywatch/paywatch/matcher"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Redecide decides intent id again in tx, as of now: it decides the
// intent's payable (every intent of it at once, matcher.DecidePayable).
// The scanner sink calls it (RedecideAll) for every intent a block, tip or
// rewind touched, finance after a resolution, the sweep at a deadline.
func (s *Service) Redecide(ctx context.Context, tx *store.Tx, id string, now time.Time) error {
	return s.RedecideAll(ctx, tx, []string{id}, now)
}

// RedecideAll decides the payables of the given intents again in tx, each
// once, in payable id order (so that concurrent writers lock payables in
// the same order).
func (s *Service) RedecideAll(ctx context.Context, tx *store.Tx, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	payables, err := tx.PayablesOfIntentsForUpdate(ctx, ids)
	if err != nil {
		return err
	}
	if len(payables) < len(uniq(ids)) {
		// An unknown intent id: as GetIntent would say.
		for _, id := range ids {
			if _, err := tx.GetIntent(ctx, id); err != nil {
				return fmt.Errorf("intent %s: %w", id, err)
			}
		}
	}
	for _, p := range payables {
		if err := s.redecideLocked(ctx, tx, p, now); err != nil {
			return err
		}
	}
	return nil
}

func uniq(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// RedecidePayable decides every intent of the payable again in tx, as of
// now: it locks the payable, then its intents, asks the matcher about all
// of them at once and writes the decision (the transfers' classes and
// settled parts, the intents' states, the payable's payer, the top-ups'
// credits or their reversals) and then its events, each rendered from
// what the transaction leaves: every body is what the API shows after the
// commit. Deciding a payable that nothing changed for writes nothing.
func (s *Service) RedecidePayable(ctx context.Context, tx *store.Tx, payableID int64, now time.Time) error {
	p, err := tx.PayableForUpdate(ctx, payableID)
	if err != nil {
		return err
	}
	return s.redecideLocked(ctx, tx, p, now)
}

// redecideLocked is RedecidePayable for payable p, locked by the caller
// and read under that lock.
func (s *Service) redecideLocked(ctx context.Context, tx *store.Tx, p store.Payable, now time.Time) error {
	dc, err := s.readPayable(ctx, tx, p)
	if err != nil {
		return err
	}
	others, err := s.decideVoiding(ctx, tx, dc, now)
	if err != nil {
		return err
	}
	if err := s.writeDecision(ctx, tx, dc, now); err != nil {
		return err
	}
	if err := s.appendDecisionEvents(ctx, tx, dc, now); err != nil {
		return err
	}
	// A voided credit's transfer went back to the intent of its address,
	// which may be another payable's.
	return s.RedecideAll(ctx, tx, others, now)
}

// reevaluateLocked decides intent id's payable, p, locked by the caller.
func (s *Service) reevaluateLocked(ctx context.Context, tx *store.Tx, p store.Payable, _ string, now time.Time) error {
	return s.RedecidePayable(ctx, tx, p.ID, now)
}

// payableDecision is one payable's decision in the making: what was read
// under the locks, what the matcher decided, and what was written, for
// the events rendered at the end.
type payableDecision struct {
	p       store.Payable
	intents []store.Intent
	// all are each intent's transfers (for its view), matched those the
	// matcher decides (balance-check items count only once credited).
	all, matched [][]store.Transfer
	payer        int
	ds           []matcher.Decision
	// after are the intents as the decision leaves them.
	after []store.Intent
	// unmatched are the transfers that became a finance item, ledger the
	// entries written, per intent.
	unmatched [][]store.Transfer
	ledger    [][]store.LedgerEntry
	voided    map[string]bool
	// secondSource is, per intent, whether its transfers count as
	// confirmed only once a second source verified them.
	secondSource []bool
}

// readPayable locks and reads the payable's intents and their transfers.
func (s *Service) readPayable(ctx context.Context, tx *store.Tx, p store.Payable) (*payableDecision, error) {
	// The intents locked and their transfers read in one round trip.
	ins, trs, err := tx.IntentsAndTransfersOfPayableForUpdate(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(ins))
	for i, in := range ins {
		at[in.ID] = i
	}
	dc := &payableDecision{p: p, intents: ins, all: make([][]store.Transfer, len(ins)), matched: make([][]store.Transfer, len(ins)),
		unmatched: make([][]store.Transfer, len(ins)), ledger: make([][]store.LedgerEntry, len(ins)), voided: map[string]bool{},
		secondSource: make([]bool, len(ins))}
	for i, in := range ins {
		// A paid intent stays paid on the facts that paid it (a threshold
		// configured later does not unpay it); a reorg that takes its
		// transfer away is what reverts it, as ever.
		dc.secondSource[i] = s.needsSecondSource(in) && in.Status != payment.IntentPaid
	}
	for _, t := range trs {
		i := at[t.IntentID]
		dc.all[i] = append(dc.all[i], t)
	}
	for i := range ins {
		dc.matched[i] = matchable(dc.all[i])
	}
	return dc, nil
}

// needsSecondSource reports whether intent in is large on its network
// (networks.<n>.large_amount_usd): its transfers pay only once an endpoint
// of another provider verified them (issue 33 item 5); until then it stays
// detected.
func (s *Service) needsSecondSource(in store.Intent) bool {
	if s.cfg == nil {
		return false
	}
	nc := s.cfg.Networks[payment.Network(in.Network)]
	if nc == nil {
		return false
	}
	large, ok := nc.LargeAmount()
	return ok && in.AmountCents >= int64(large)
}

// decide asks the matcher about the payable's intents as read.
func (dc *payableDecision) decide(now time.Time) {
	ins := make([]matcher.Intent, len(dc.intents))
	trs := make([][]matcher.Transfer, len(dc.intents))
	dc.payer = -1
	for i, in := range dc.intents {
		ins[i] = matcher.Intent{Asset: payment.Asset(in.Asset), Amount: in.Amount, Tolerance: in.Tolerance, DustMin: in.DustMin,
			Deadline: in.ExpiresAt, Superseded: in.SupersededBy != "", WasPaid: in.PaidAt != nil}
		if dc.p.PaidByIntent == in.ID {
			dc.payer = i
		}
		trs[i] = make([]matcher.Transfer, len(dc.matched[i]))
		for j, t := range dc.matched[i] {
			trs[i][j] = matcher.Transfer{Asset: payment.Asset(t.Asset), Amount: t.Amount, FirstSeen: t.FirstSeenAt,
				Order: t.CountsFrom(), Confirmed: t.Status == payment.TransferConfirmed && (!dc.secondSource[i] || t.Verify.Verified()), Orphaned: t.Status == payment.TransferOrphaned,
				Credited: t.Credited, Resolved: t.Resolved}
		}
	}
	payer, ds := matcher.DecidePayable(matcher.Payable{PaidByDebit: dc.p.PaidByEntry != "", Payer: dc.payer}, ins, trs, now)
	dc.payer, dc.ds = payer, ds
}

// decideVoiding decides the payable, voiding first every credit_intent that
// can no longer take effect (its transfer is a duplicate of a payable paid
// by other means: finance decides anew) and deciding again without it, so
// that what is written is what a later decision on the same facts says.
// It returns the intents the voided transfers went back to.
func (s *Service) decideVoiding(ctx context.Context, tx *store.Tx, dc *payableDecision, now time.Time) ([]string, error) {
	var others []string
	for {
		dc.decide(now)
		voided := false
		for i := range dc.intents {
			for j, t := range dc.matched[i] {
				if !t.Credited || dc.ds[i].Classes[j] != payment.Duplicate || dc.payer == i {
					continue
				}
				_, err := tx.VoidCredit(ctx, t.ID, "payable "+dc.p.Reference+" was paid by other means before this transfer could pay it", now)
				if err != nil {
					return nil, err
				}
				dc.voided[t.ID] = true
				voided = true
				tx.AfterCommit(func() { // logged once written: the transaction may be retried
					s.log.Warn("credited transfer of a payable paid elsewhere: credit void, back to finance",
						"transfer", t.ID, "intent", dc.intents[i].ID, "reference", dc.p.Reference)
				})
				fresh, err := tx.GetTransfer(ctx, t.ID)
				if err != nil {
					return nil, err
				}
				if fresh.IntentID != t.IntentID {
					dc.drop(i, t.ID)
					if fresh.IntentID != "" {
						if k := dc.index(fresh.IntentID); k >= 0 {
							dc.all[k] = append(dc.all[k], fresh)
							sortRecorded(dc.all[k])
						} else {
							others = append(others, fresh.IntentID)
						}
					}
				} else {
					dc.replace(i, fresh)
				}
			}
		}
		if !voided {
			return others, nil
		}
		for i := range dc.intents {
			dc.matched[i] = matchable(dc.all[i])
		}
	}
}

func (dc *payableDecision) index(intentID string) int {
	for i, in := range dc.intents {
		if in.ID == intentID {
			return i
		}
	}
	return -1
}

func (dc *payableDecision) drop(i int, transferID string) {
	out := dc.all[i][:0:0]
	for _, t := range dc.all[i] {
		if t.ID != transferID {
			out = append(out, t)
		}
	}
	dc.all[i] = out
}

func (dc *payableDecision) replace(i int, t store.Transfer) {
	for j := range dc.all[i] {
		if dc.all[i][j].ID == t.ID {
			dc.all[i][j] = t
		}
	}
}

// sortRecorded orders transfers as TransfersOfIntents does.
func sortRecorded(trs []store.Transfer) {
	sort.SliceStable(trs, func(a, b int) bool { return trs[a].Recorded < trs[b].Recorded })
}

// writeDecision writes the decision: each transfer's class and settled
// part (and the finance items it makes), each intent's state (those
// leaving paid first, so that a payable never has two paid intents), the
// payable's payer, and each top-up intent's credit.
func (s *Service) writeDecision(ctx context.Context, tx *store.Tx, dc *payableDecision, now time.Time) error {
	dc.after = make([]store.Intent, len(dc.intents))
	var writes []store.TransferDecision
	for i := range dc.intents {
		writes = dc.writeTransfers(writes, i)
		dc.after[i] = stateAfter(dc.intents[i], dc.ds[i], now)
	}
	tx.QueueTransferDecisions(writes, now)
	for _, leaving := range []bool{true, false} {
		for i, in := range dc.intents {
			if (in.Status == payment.IntentPaid && dc.after[i].Status != payment.IntentPaid) != leaving || !stateChanged(in, dc.after[i]) {
				continue
			}
			a := dc.after[i]
			st := store.IntentState{Status: a.Status, Overpaid: a.Overpaid, Late: a.Late, Received: a.Received,
				ConfirmedSum: a.ConfirmedSum, DetectedAt: a.DetectedAt, PaidAt: a.PaidAt}
			if err := tx.UpdateIntentState(ctx, in.ID, st, now); err != nil {
				return err
			}
		}
	}
	if err := s.writePayer(ctx, tx, dc); err != nil {
		return err
	}
	if dc.p.Kind != payment.Topup {
		return nil
	}
	for i := range dc.intents {
		es, err := s.creditFollows(ctx, tx, dc.after[i], now)
		if err != nil {
			return err
		}
		dc.ledger[i] = es
	}
	return nil
}

// writeTransfers adds intent i's transfers' decisions to writes (one
// statement writes the payable's) and collects those that became a
// finance item.
func (dc *payableDecision) writeTransfers(writes []store.TransferDecision, i int) []store.TransferDecision {
	d := dc.ds[i]
	for j := range dc.matched[i] {
		t := &dc.matched[i][j]
		c, settled := d.Classes[j], d.Settled[j]
		w := store.TransferDecision{ID: t.ID, Class: c, Settled: settled}
		if c != t.Classification || settled.Cmp(t.Settled) != 0 {
			w.Decide = true
			t.Classification, t.Settled = c, settled
		}
		if forFinance(d, c, *t) && t.NotifiedClass != c {
			w.Notify = true
			t.NotifiedClass = c
			dc.unmatched[i] = append(dc.unmatched[i], *t)
		}
		if w.Decide || w.Notify {
			writes = append(writes, w)
		}
		dc.replace(i, *t)
	}
	return writes
}

// stateAfter is intent in as decision d leaves it. paid_at is when it was
// first paid (a round trip that pays it again gives the same books), and
// detected_at when something first counted.
func stateAfter(in store.Intent, d matcher.Decision, now time.Time) store.Intent {
	a := in
	a.Status, a.Overpaid, a.Late, a.Received, a.ConfirmedSum = d.Status, d.Overpaid, d.Late, d.Received, d.ConfirmedSum
	if a.DetectedAt == nil && d.Received.Sign() > 0 {
		a.DetectedAt = &now
	}
	if d.Status == payment.IntentPaid && a.PaidAt == nil {
		a.PaidAt = &now
	}
	return a
}

func stateChanged(a, b store.Intent) bool {
	return a.Status != b.Status || a.Overpaid != b.Overpaid || a.Late != b.Late || a.Received.Cmp(b.Received) != 0 ||
		a.ConfirmedSum.Cmp(b.ConfirmedSum) != 0 || !sameTime(a.DetectedAt, b.DetectedAt) || !sameTime(a.PaidAt, b.PaidAt)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// writePayer makes the payable's paid state follow the decision.
func (s *Service) writePayer(ctx context.Context, tx *store.Tx, dc *payableDecision) error {
	p := dc.p
	want := ""
	if dc.payer >= 0 {
		want = dc.intents[dc.payer].ID
	}
	if p.PaidByIntent == want {
		return nil
	}
	if p.PaidByIntent != "" {
		if err := tx.ClearPayablePaid(ctx, p.ID, p.PaidByIntent); err != nil {
			return err
		}
		was := dc.intents[dc.index(p.PaidByIntent)]
		tx.AfterCommit(func() { // logged once written: the transaction may be retried
			s.log.Error("paid intent reverted by a reorg", "intent", was.ID, "network", was.Network, "reference", p.Reference)
		})
	}
	if want != "" {
		a := dc.after[dc.payer]
		if err := tx.SetPayablePaid(ctx, p.ID, want, *a.PaidAt); err != nil {
			return fmt.Errorf("intent %s paid but payable %s is not payable: %w", want, p.Reference, err)
		}
	}
	return nil
}

// creditFollows keeps a top-up intent's credit standing exactly while the
// intent is paid: one credit net while paid, none otherwise, whatever was
// written before (so a replay, a rescan or a round trip never credits
// twice). A re-credit (paid, reverted, paid again, through this intent or
// another of the top-up) whose reversal could not take everything back,
// because the customer had spent it, first settles that rest: a recovery
// entry right after the credit, under the same account lock, so the credit
// never makes the same money spendable twice. It returns the entries
// written, in order.
func (s *Service) creditFollows(ctx context.Context, tx *store.Tx, in store.Intent, now time.Time) ([]store.LedgerEntry, error) {
	if in.PaidAt == nil {
		return nil, nil // never paid: never credited
	}
	n, err := tx.NetIntentCredits(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	paid := in.Status == payment.IntentPaid
	switch {
	case paid && n < 1:
		return s.credit(ctx, tx, in, now)
	case !paid && n > 0:
		e, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: in.Store, Account: in.Account, Type: payment.EntryReversal, AmountCents: in.AmountCents,
			Reference: in.Reference, IntentID: in.ID}, now)
		if err != nil {
			return nil, err
		}
		if e.UnrecoveredCents > 0 {
			tx.AfterCommit(func() { // logged once written: the transaction may be retried
				s.log.Error("reversed top-up exceeded the balance", "account", in.Account, "intent", in.ID,
					"unrecovered_cents", e.UnrecoveredCents)
			})
		}
		return []store.LedgerEntry{e}, nil
	}
	return nil, nil
}

// credit credits a paid top-up intent, then recovers what an earlier
// reversal of the top-up could not take back.
func (s *Service) credit(ctx context.Context, tx *store.Tx, in store.Intent, now time.Time) ([]store.LedgerEntry, error) {
	e, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: in.Store, Account: in.Account, Type: payment.EntryCredit, AmountCents: in.AmountCents,
		Reference: in.Reference, IntentID: in.ID}, now)
	if err != nil {
		return nil, err
	}
	out := []store.LedgerEntry{e}
	owed, err := tx.PayableUnrecovered(ctx, in.ID)
	if err != nil || owed <= 0 {
		return out, err
	}
	r, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: in.Store, Account: in.Account, Type: payment.EntryRecovery, AmountCents: owed,
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

// appendDecisionEvents appends the decision's events, last: they take the
// event lock, held until commit. Their bodies are rendered from what this
// transaction leaves, which is what the API shows after the commit.
func (s *Service) appendDecisionEvents(ctx context.Context, tx *store.Tx, dc *payableDecision, now time.Time) error {
	tips := map[string]int64{}
	for i, in := range dc.intents {
		changed := in.Status != dc.after[i].Status
		if len(dc.unmatched[i]) == 0 && !changed && len(dc.ledger[i]) == 0 {
			continue
		}
		tip, ok := tips[in.Network]
		if !ok {
			var err error
			if tip, err = tx.NodeHeight(ctx, in.Network); err != nil {
				return err
			}
			tips[in.Network] = tip
		}
		for _, t := range dc.unmatched[i] {
			if err := tx.QueueAppendEvent(payment.EventTransferUnmatched, in.ID, t.ID, in.Account, views.TransferOf(t, tip), now); err != nil {
				return err
			}
		}
		if changed {
			a := dc.after[i]
			view := s.viewOf(a, dc.all[i], tip)
			if err := tx.QueueAppendEvent(payment.IntentEvent(a.Status), in.ID, "", in.Account, view, now); err != nil {
				return err
			}
		}
		for _, e := range dc.ledger[i] {
			if err := tx.QueueAppendEvent(payment.LedgerEvent(e.Type), in.ID, "", e.Account, views.LedgerEntryOf(e), now); err != nil {
				return err
			}
		}
	}
	return nil
}

// forFinance reports whether a transfer is a finance item now: a class
// that needs review, with a part no decision covers, except that a partial
// payment is only one once its intent stopped waiting for the rest, and a
// transfer that vanished in a reorg only when it had paid the intent
// (reverted).
func forFinance(d matcher.Decision, c payment.Classification, t store.Transfer) bool {
	if !c.NeedsReview() {
		return false
	}
	if t.Unresolved().Sign() == 0 && t.Amount.Sign() > 0 {
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

// Sweep enforces deadlines: every open intent past its deadline is decided
// again (expired or underpaid), each in its own transaction, in batches
// until none is left. It returns how many it looked at.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	const batch = 500
	total := 0
	for {
		ids, err := s.store.DueIntents(ctx, s.now(), batch)
		if err != nil {
			return total, err
		}
		for _, id := range ids {
			err := s.store.InTx(ctx, func(tx *store.Tx) error { return s.Redecide(ctx, tx, id, s.now()) })
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
// a new slice: the intent's transfers (for its view) are left as they are.
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
