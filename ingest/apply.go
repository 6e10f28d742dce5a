package ingest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// ErrCursorMoved is returned by ApplyBlock when the block does not extend
// the stored cursor (another writer moved it, or the chain reorganized).
var ErrCursorMoved = errors.New("block does not extend the cursor")

// requiredFor returns the confirmations a transfer to a needs: its intent's,
// or the method default for an address without intent.
func (s *Sink) requiredFor(network string, asset payment.Asset, a store.Address) int {
	if a.IntentID != "" {
		return a.IntentConfirmations
	}
	if m, ok := payment.MethodFor(payment.Network(network), asset); ok {
		if mc := s.cfg.Methods[m.Method]; mc != nil && mc.Confirmations != nil {
			return *mc.Confirmations
		}
		return m.DefaultConfirmations
	}
	return 1
}

// recordTransfer upserts one observed transfer and returns the intents its
// decision touches: the one the stored transfer belongs to (finance may
// have credited it to another intent than its address's) and its
// address's.
func (s *Sink) recordTransfer(ctx context.Context, tx *store.Tx, m *moves, network string, t chains.Transfer, height *int64,
	hash, scannedBy string, status payment.TransferStatus, seen, now time.Time, known map[string]store.Address) ([]string, error) {
	var a store.Address
	var err error
	if known != nil {
		var ok bool
		if a, ok = known[string(t.Key)]; !ok {
			err = store.ErrNotFound
		}
	} else {
		a, err = tx.AddressByKey(ctx, network, t.Key)
	}
	if errors.Is(err, store.ErrNotFound) {
		// The source reported a key we do not own (a watch-set race cannot
		// cause this: keys are only ever added). Record nothing.
		return nil, fmt.Errorf("transfer %s:%d to %s: key is not one of our addresses", t.TxID, t.Index, t.Address)
	}
	if err != nil {
		return nil, err
	}
	required := s.requiredFor(network, t.Asset, a)
	if t.Coinbase {
		// Unspendable for CoinbaseMaturity blocks, and the first output a
		// reorg takes away: it pays only once it has matured.
		required = max(required, payment.CoinbaseMaturity)
	}
	if t.PegOut {
		// A Litecoin MWEB peg-out: unspendable for PegoutMaturity blocks
		// (issue 32 item 4), as a coinbase output is for its maturity.
		required = max(required, payment.PegoutMaturity)
	}
	class, notified := payment.UnknownAddress, payment.UnknownAddress
	if a.IntentID != "" {
		// A placeholder until the matcher classifies it in this transaction.
		class, notified = payment.Partial, ""
	}
	rec := store.Transfer{
		ID: store.NewID("tr"), Network: network, TxID: t.TxID, Index: t.Index, Asset: string(t.Asset),
		Address: t.Address, AddressKey: t.Key, Amount: t.Amount, IntentID: a.IntentID, BlockHeight: height,
		BlockHash: hash, FirstSeenAt: seen, Status: status, ConfirmationsRequired: required,
		Classification: class, NotifiedClass: notified, CreatedAt: now, Coinbase: t.Coinbase, ScannedBy: scannedBy,
	}
	if rec.Address == "" {
		rec.Address = a.Address
	}
	stored, inserted, err := tx.UpsertTransfer(ctx, rec)
	if err != nil {
		return nil, fmt.Errorf("record transfer %s:%d: %w", t.TxID, t.Index, err)
	}
	if inserted && s.counter != nil {
		inBlock, after := height != nil, now.Sub(seen)
		tx.AfterCommit(func() {
			s.counter.TransferRecorded(network, string(t.Asset))
			if o, ok := s.counter.(DetectionObserver); ok && inBlock {
				o.TransferDetected(network, after)
			}
		})
	}
	touched := []string{stored.IntentID, a.IntentID}
	if stored.Reexecuted {
		// The best chain's execution moved other content than the stored
		// row said (issue 32 item 2): the row follows it; the intent it
		// paid before is decided again, and finance's decisions on the
		// old content are undone.
		was, err := tx.ReplacedContent(ctx, stored.ID)
		if err != nil {
			return nil, fmt.Errorf("transfer %s:%d re-executed: %w", t.TxID, t.Index, err)
		}
		if err := s.credits.Reexecuted(ctx, tx, stored.ID, was, now); err != nil {
			return nil, err
		}
		touched = append(touched, was.IntentID)
		tx.AfterCommit(func() {
			s.log.Warn("transaction re-executed: the transfer now has the best chain's content", "network", network,
				"transfer", stored.ID, "txid", t.TxID, "index", t.Index, "amount", stored.Amount.String(), "was", was.Amount.String(),
				"asset", stored.Asset, "was_asset", was.Asset, "address", stored.Address, "was_address", was.Address)
		})
		if stored.IntentID == "" && was.IntentID != "" {
			m.unknown = append(m.unknown, stored.ID)
		}
	}
	if inserted && a.IntentID == "" {
		// A finance item from the start: announced once the transaction's
		// confirmations are applied (settle), so that its body is what a
		// read after the commit shows.
		m.unknown = append(m.unknown, stored.ID)
	}
	return touched, nil
}

// ApplyBlock stores one block in one transaction: its ref, its transfers to
// our addresses, the confirmations reached at tips, the matcher's decisions
// and events, and the cursor. The block must extend the cursor.
func (s *Sink) ApplyBlock(ctx context.Context, network payment.Network, b chains.Block, tips chains.Tips) error {
	return s.ApplyBlocks(ctx, network, []chains.Block{b}, tips)
}

// confirm promotes transfers that reached their confirmations.
func (s *Sink) confirm(ctx context.Context, tx *store.Tx, network string, tip, final int64, now time.Time, m *moves) error {
	trs, err := tx.ConfirmUpTo(ctx, network, tip, final, now)
	if err != nil {
		return err
	}
	m.add(trs)
	return nil
}

// reevaluateAll decides the affected intents' payables again (in payable
// order, so concurrent writers lock rows in the same order).
func (s *Sink) reevaluateAll(ctx context.Context, tx *store.Tx, affected map[string]bool, now time.Time) error {
	ids := make([]string, 0, len(affected))
	for id := range affected {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return s.decider.RedecideAll(ctx, tx, ids, now)
}

// ApplyTips records a new node tip and final height and promotes the
// transfers that reached their confirmations, without refetching blocks.
func (s *Sink) ApplyTips(ctx context.Context, network payment.Network, tips chains.Tips) error {
	n := string(network)
	return s.inTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		if _, err := tx.CursorForUpdate(ctx, n); err != nil {
			return err
		}
		if err := tx.SetTips(ctx, n, int64(tips.Node), int64(tips.Final), now); err != nil {
			return err
		}
		m := newMoves()
		if err := s.confirm(ctx, tx, n, int64(tips.Node), int64(tips.Final), now, m); err != nil {
			return err
		}
		return s.settle(ctx, tx, m, now)
	})
}

// Rewind moves the cursor of network back to height (a reorg's common
// ancestor, or an operator's rescan): transfers in blocks above it are
// orphaned and what they paid is re-decided. The blocks are replayed next.
func (s *Sink) Rewind(ctx context.Context, network payment.Network, to chains.Height, hash string) error {
	n, height := string(network), int64(to)
	return s.inTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		if _, err := tx.CursorForUpdate(ctx, n); err != nil {
			return err
		}
		trs, err := tx.OrphanAbove(ctx, n, height, now)
		if err != nil {
			return err
		}
		m := newMoves()
		m.add(trs)
		// Sent with settle's first statement or the commit.
		tx.QueueRewindCursor(n, height, hash, now)
		return s.settle(ctx, tx, m, now)
	})
}

// ApplyPending records the mempool's transfers to our addresses (detected,
// first seen now) and orphans earlier mempool transfers that vanished
// unmined (replaced or evicted). The scanner calls it only once the blocks
// up to the node's current tip are scanned, so a transfer missing from the
// mempool is not in a block we have not read.
func (s *Sink) ApplyPending(ctx context.Context, network payment.Network, pending []chains.Transfer) error {
	return s.applyPending(ctx, network, pending, true)
}

// RecordPending records the mempool's transfers as ApplyPending does but
// takes none of the recorded ones for vanished: the scanner calls it when
// the node's tip lags its mempool.
func (s *Sink) RecordPending(ctx context.Context, network payment.Network, pending []chains.Transfer) error {
	return s.applyPending(ctx, network, pending, false)
}

var _ chains.PendingRecorder = (*Sink)(nil)

func (s *Sink) applyPending(ctx context.Context, network payment.Network, pending []chains.Transfer, orphan bool) error {
	n := string(network)
	return s.inTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		m := newMoves()
		keep := make([]string, 0, len(pending))
		for _, t := range pending {
			keep = append(keep, t.TxID)
			ids, err := s.recordPending(ctx, tx, m, n, t, now)
			if err != nil {
				return err
			}
			m.intent(ids...)
		}
		if orphan {
			gone, err := tx.OrphanPending(ctx, n, keep, now)
			if err != nil {
				return err
			}
			m.add(gone)
		}
		return s.settle(ctx, tx, m, now)
	})
}

// recordPending records a mempool transfer unless it is already known in a
// block; an orphaned one that is back in the mempool becomes pending again.
func (s *Sink) recordPending(ctx context.Context, tx *store.Tx, m *moves, network string, t chains.Transfer, now time.Time) ([]string, error) {
	existing, err := tx.TransferByKey(ctx, network, t.TxID, t.Index)
	if err == nil {
		if existing.Status != payment.TransferOrphaned {
			return nil, nil
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return s.recordTransfer(ctx, tx, m, network, t, nil, "", "", payment.TransferPending, now, now, nil)
}
