package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

var _ chains.BatchSink = (*Sink)(nil)

// ApplyBlocks stores consecutive blocks in one transaction, as ApplyBlock
// does for one: their refs, their transfers to our addresses, the
// confirmations reached at tips, the matcher's decisions and events, and the
// cursor at the last block. The first block must extend the cursor and each
// the one before it. A catch-up pays one transaction per batch: the
// per-block round trips are what bounds it otherwise.
func (s *Sink) ApplyBlocks(ctx context.Context, network payment.Network, bs []chains.Block, tips chains.Tips) error {
	if len(bs) == 0 {
		return nil
	}
	n := string(network)
	return s.inTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		refs := make([]store.BlockRef, len(bs))
		times := make([]time.Time, len(bs))
		for i, b := range bs {
			refs[i] = store.BlockRef{Height: int64(b.Height), Hash: b.Hash, Parent: b.Parent}
			times[i] = b.Time
		}
		top := bs[len(bs)-1]
		height := int64(top.Height)
		// The addresses the batch's transfers pay, with their intents:
		// nothing below changes which intent has an address.
		var keys [][]byte
		for _, b := range bs {
			for _, t := range b.Transfers {
				keys = append(keys, t.Key)
			}
		}
		// One round trip: lock the cursor, record tips, move the cursor to
		// the top block, record block refs (forgetting old ones), orphan
		// what a replaced block held (a rescan across a reorg), and read
		// the addresses paid or, when the batch records no transfer (so
		// nothing after changes what reached its confirmations), promote
		// the transfers that did. Blocks that do not extend the cursor
		// fail the transaction below.
		tip := max(int64(tips.Node), height)
		res, err := tx.StartBlocksWith(ctx, n, tip, int64(tips.Final), refs, times,
			height-s.keptBlocks(network), now, store.StartReads{Keys: keys, Confirm: len(keys) == 0})
		if err != nil {
			return err
		}
		at, hash := res.Cursor.Height, res.Cursor.Hash
		for _, b := range bs {
			if int64(b.Height) <= at || b.Parent != hash {
				return fmt.Errorf("%w: block %d parent %s, cursor %d %s", ErrCursorMoved, b.Height, b.Parent, at, hash)
			}
			at, hash = int64(b.Height), b.Hash
		}
		m := newMoves()
		m.add(res.Replaced)
		known := res.Known
		for _, b := range bs {
			h := int64(b.Height)
			seen := now
			if !b.Time.IsZero() && b.Time.Before(now) {
				// Catching up after downtime: the block's time is when the
				// payment was made, not when we read it.
				seen = b.Time.UTC()
			}
			for _, t := range b.Transfers {
				id, err := s.recordTransfer(ctx, tx, m, n, t, &h, b.Hash, b.Endpoint, payment.TransferConfirming, seen, now, known)
				if err != nil {
					return fmt.Errorf("block %d: %w", b.Height, err)
				}
				m.intent(id...)
			}
		}
		if len(keys) == 0 {
			m.add(res.Confirmed)
		} else if err := s.confirm(ctx, tx, n, tip, int64(tips.Final), now, m); err != nil {
			return err
		}
		return s.settle(ctx, tx, m, now)
	})
}

// minKeptBlocks is the fewest block refs kept below the cursor, and
// keptMargin what is kept beyond the safety depth: a walk-back within the
// safety depth always finds the stored blocks it compares with.
const (
	minKeptBlocks = 2000
	keptMargin    = 100
)

// keptBlocks is how many block refs below the cursor are kept:
// max(2000, safety_depth + margin).
func (s *Sink) keptBlocks(network payment.Network) int64 {
	keep := int64(minKeptBlocks)
	if nc := s.cfg.Networks[network]; nc != nil {
		keep = max(keep, nc.SafetyDepth+keptMargin)
	}
	return keep
}
