package intents

import (
	"context"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

var _ chains.BatchSink = (*Service)(nil)

// ApplyBlocks stores consecutive blocks in one transaction, as ApplyBlock
// does for one: their refs, their transfers to our addresses, the
// confirmations reached at tips, the matcher's decisions and events, and the
// cursor at the last block. The first block must extend the cursor and each
// the one before it. A catch-up pays one transaction per batch: the
// per-block round trips are what bounds it otherwise.
func (s *Service) ApplyBlocks(ctx context.Context, network payment.Network, bs []chains.Block, tips chains.Tips) error {
	if len(bs) == 0 {
		return nil
	}
	n := string(network)
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		cur, err := tx.CursorForUpdate(ctx, n)
		if err != nil {
			return err
		}
		refs := make([]store.BlockRef, len(bs))
		times := make([]time.Time, len(bs))
		heights := make([]int64, len(bs))
		hashes := make([]string, len(bs))
		height, hash := cur.Height, cur.Hash
		for i, b := range bs {
			if int64(b.Height) <= height || b.Parent != hash {
				return fmt.Errorf("%w: block %d parent %s, cursor %d %s", ErrCursorMoved, b.Height, b.Parent, height, hash)
			}
			height, hash = int64(b.Height), b.Hash
			refs[i] = store.BlockRef{Height: height, Hash: b.Hash, Parent: b.Parent}
			times[i], heights[i], hashes[i] = b.Time, height, b.Hash
		}
		top := bs[len(bs)-1]
		if err := tx.SetTips(ctx, n, max(tips.Node, height), tips.Final, now); err != nil {
			return err
		}
		if err := tx.PutBlocks(ctx, n, refs, times); err != nil {
			return err
		}
		affected := map[string]bool{}
		replaced, err := tx.OrphanReplacedBlocks(ctx, n, heights, hashes, now)
		if err != nil {
			return err
		}
		for _, t := range replaced {
			if t.IntentID != "" {
				affected[t.IntentID] = true
			}
		}
		for _, b := range bs {
			h := int64(b.Height)
			seen := now
			if !b.Time.IsZero() && b.Time.Before(now) {
				// Catching up after downtime: the block's time is when the
				// payment was made, not when we read it.
				seen = b.Time.UTC()
			}
			for _, t := range b.Transfers {
				id, err := s.recordTransfer(ctx, tx, n, t, &h, b.Hash, "confirming", seen, now)
				if err != nil {
					return fmt.Errorf("block %d: %w", b.Height, err)
				}
				if id != "" {
					affected[id] = true
				}
			}
		}
		if err := s.confirm(ctx, tx, n, max(tips.Node, height), tips.Final, now, affected); err != nil {
			return err
		}
		if err := s.reevaluateAll(ctx, tx, affected, now); err != nil {
			return err
		}
		blockAt := top.Time
		if err := tx.SetCursor(ctx, n, height, top.Hash, &blockAt, now); err != nil {
			return err
		}
		return tx.PruneBlocks(ctx, n, height-2000)
	})
}
