package chains

import (
	"context"
	"fmt"
)

// SparseSource is an optional capability of a Source whose blocks are final
// when served (Solana at finalized commitment): instead of reading every
// height it finds the few blocks that hold transfers to watched keys, for
// example by asking the node for each watched address's recent transactions.
// When Sparse reports true, the scanner's catch-up calls SparseBlocks instead
// of Block; init, rescans and reorg checks still use Block.
type SparseSource interface {
	Source
	// Sparse reports whether the source scans sparsely for w right now (a
	// mode chosen by configuration or by the watched set's size).
	Sparse(w Watched) bool
	// SparseBlocks returns, in ascending height order within [from, to], the
	// blocks that hold a transfer to a key of w, followed (unless it is
	// already the last one) by the newest block at or below to, possibly
	// without transfers, so that the cursor passes the heights in between.
	// Heights, hashes and times are the chain's; Parent links each block to
	// the one before it in the list and the first one to parent (the
	// cursor's hash): a sparse scan is a chain of the blocks it applies. An
	// error means nothing was read; the scanner retries from its cursor.
	SparseBlocks(ctx context.Context, from, to uint64, parent string, w Watched) ([]Block, error)
}

// catchUpSparse applies what a SparseSource found above the cursor, in
// order (in one transaction with a BatchSink), after checking that the list
// is ascending, within the tip and linked.
func (s *Scanner) catchUpSparse(ctx context.Context, src SparseSource, cur Cursor, tips Tips) error {
	from, to := uint64(cur.Height+1), uint64(tips.Node)
	blocks, err := src.SparseBlocks(ctx, from, to, cur.Hash, s.watched)
	if err != nil {
		return fmt.Errorf("blocks %d-%d: %w", from, to, err)
	}
	if len(blocks) == 0 {
		return fmt.Errorf("blocks %d-%d: %w: no block at or below %d", from, to, ErrBlockNotFound, to)
	}
	height, hash := cur.Height, cur.Hash
	for _, b := range blocks {
		if int64(b.Height) <= height || b.Height > to || b.Parent != hash {
			return fmt.Errorf("blocks %d-%d: block %d (parent %s) does not follow %d (%s): %w",
				from, to, b.Height, b.Parent, height, hash, ErrInvalidResponse)
		}
		height, hash = int64(b.Height), b.Hash
	}
	if err := s.apply(ctx, blocks, tips); err != nil {
		return err
	}
	s.mu.Lock()
	s.lastTips = tips
	s.mu.Unlock()
	return nil
}
