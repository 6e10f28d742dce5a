package finance

import (
	"context"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// FollowChain keeps each credit_account credit of transfer id standing
// exactly while the transfer is confirmed on the chain, as a paid top-up's
// credit is (net per decision, so replays and rescans never double
// anything; a transfer may carry one for its surplus and one for the
// rest). The scanner sink calls it in its transaction for every transfer
// with such a decision that a block, tip or rewind moved:
//   - not confirmed any more (orphaned by a reorg, or moved to a block not
//     deep enough yet) and credited net: a reversal of the credited amount,
//     taking what the balance holds and recording the rest as unrecovered,
//     with a ledger.reversed event;
//   - confirmed again (re-mined) and not credited net: the credit again,
//     then a recovery of what the reversal could not take back (the
//     balance had been spent), with ledger.credited and ledger.recovered.
//
// A transfer without a credit_account decision is left alone. The decision
// stays credit_account: it is finance's, the ledger shows what the chain did
// to it.
func (s *Service) FollowChain(ctx context.Context, tx *store.Tx, id string, now time.Time) error {
	t, err := tx.GetTransfer(ctx, id)
	if err != nil {
		return err
	}
	for _, r := range t.Resolutions {
		if r.Action != ActionCreditAccount || r.Account == "" || r.AmountCents == nil {
			continue
		}
		if err := s.follow(ctx, tx, t, r, now); err != nil {
			return err
		}
	}
	return nil
}

// follow brings one credit_account decision's credit in line with its
// transfer.
func (s *Service) follow(ctx context.Context, tx *store.Tx, t store.Transfer, r store.Resolution, now time.Time) error {
	n, err := tx.NetResolutionCredits(ctx, r.Seq)
	if err != nil {
		return err
	}
	entry := store.LedgerEntry{Store: t.Store, Account: r.Account, AmountCents: *r.AmountCents, Reference: "transfer:" + t.ID, TransferID: t.ID, ResolutionSeq: r.Seq}
	var out []store.LedgerEntry
	switch {
	case t.Status != payment.TransferConfirmed && n > 0:
		entry.Type = payment.EntryReversal
		e, err := tx.AppendLedger(ctx, entry, now)
		if err != nil {
			return err
		}
		out = append(out, e)
		// Logged once it is written: the transaction may be retried.
		tx.AfterCommit(func() {
			s.log.Error("account credit reversed: its transfer left the chain", "account", r.Account, "transfer", t.ID,
				"network", t.Network, "status", t.Status, "unrecovered_cents", e.UnrecoveredCents)
		})
	case t.Status == payment.TransferConfirmed && n <= 0:
		entry.Type = payment.EntryCredit
		e, err := tx.AppendLedger(ctx, entry, now)
		if err != nil {
			return err
		}
		out = append(out, e)
		owed, err := tx.ResolutionUnrecovered(ctx, r.Seq)
		if err != nil {
			return err
		}
		if owed > 0 {
			entry.Type, entry.AmountCents = payment.EntryRecovery, owed
			rec, err := tx.AppendLedger(ctx, entry, now)
			if err != nil {
				return err
			}
			if rec.ID != "" {
				out = append(out, rec)
			}
		}
		tx.AfterCommit(func() {
			s.log.Warn("account credit stands again: its transfer is back on the chain", "account", r.Account,
				"transfer", t.ID, "network", t.Network, "owed_cents", owed)
		})
	}
	for _, e := range out {
		if err := tx.QueueAppendEvent(payment.LedgerEvent(e.Type), "", t.ID, e.Account, views.LedgerEntryOf(e), now); err != nil {
			return err
		}
	}
	return nil
}

// Reexecuted undoes finance's decisions on transfer id, whose transaction,
// mined again, moved other content than was decided on (was: the content
// the decisions saw; issue 32 item 2). What the best chain moved is the
// transfer: every live decision but credit_intent (which only says which
// intent the transfer counts for; the matcher recounts it) is voided with
// the reason, so the transfer is in finance's inbox again, and a
// credit_account credit that stands is reversed first (a ledger.reversed
// event), as when its transfer leaves the chain. The scanner sink calls it
// in its transaction.
func (s *Service) Reexecuted(ctx context.Context, tx *store.Tx, id string, was store.Transfer, now time.Time) error {
	t, err := tx.GetTransfer(ctx, id)
	if err != nil {
		return err
	}
	for _, r := range t.Resolutions {
		if r.Action != ActionCreditAccount || r.Account == "" || r.AmountCents == nil {
			continue
		}
		// Reverse as if the transfer had left the chain: follow does so
		// for a transfer that is not confirmed.
		gone := t
		gone.Status = payment.TransferOrphaned
		if err := s.follow(ctx, tx, gone, r, now); err != nil {
			return err
		}
	}
	reason := fmt.Sprintf("transaction re-executed: it now moves %s %s to %s (was %s %s to %s)",
		t.Amount, t.Asset, t.Address, was.Amount, was.Asset, was.Address)
	voided, err := tx.VoidDecisions(ctx, id, reason, now)
	if err != nil {
		return err
	}
	if len(voided) > 0 {
		tx.AfterCommit(func() {
			s.log.Warn("finance decisions voided: their transfer's transaction was re-executed with other content",
				"transfer", t.ID, "network", t.Network, "decisions", len(voided), "amount", t.Amount.String(), "was", was.Amount.String())
		})
	}
	return nil
}
