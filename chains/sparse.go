package chains

import (
	"context"
	"errors"
	"fmt"
)

// sparse returns the source as a SparseSource when it scans sparsely for
// the watched set now (SparseMode, when it has it, says so).
func (s *Scanner) sparse() (SparseSource, bool) {
	sp, ok := s.src.(SparseSource)
	if !ok {
		return nil, false
	}
	if m, ok := s.src.(SparseMode); ok && !m.Sparse(s.watched) {
		return nil, false
	}
	return sp, true
}

// catchUpSparse applies what a SparseSource found above the cursor, in
// order (in one transaction with a BatchSink), after checking that the list
// is ascending, within the tip and linked.
func (s *Scanner) catchUpSparse(ctx context.Context, src SparseSource, cur Cursor, tips Tips) error {
	from, to := cur.Height+1, tips.Node
	blocks, err := src.SparseBlocks(ctx, from, to, cur.Hash, s.watched)
	var missed *RescanError
	if errors.As(err, &missed) && missed.From <= cur.Height {
		s.log.Warn("source found a transfer below the cursor; replaying", "from", missed.From, "reason", missed.Reason)
		return s.rescan(ctx, missed.From)
	}
	if err != nil {
		return fmt.Errorf("blocks %d-%d: %w", from, to, err)
	}
	if len(blocks) == 0 {
		return fmt.Errorf("blocks %d-%d: %w: no block at or below %d", from, to, ErrBlockNotFound, to)
	}
	height, hash := cur.Height, cur.Hash
	for _, b := range blocks {
		if b.Height <= height || b.Height > to || b.Parent != hash {
			return fmt.Errorf("blocks %d-%d: block %d (parent %s) does not follow %d (%s): %w",
				from, to, b.Height, b.Parent, height, hash, ErrInvalidResponse)
		}
		height, hash = b.Height, b.Hash
	}
	if err := s.apply(ctx, blocks, tips); err != nil {
		return err
	}
	s.mu.Lock()
	s.lastTips = tips
	s.mu.Unlock()
	return nil
}

// RescanError is a source telling the scanner that something below the
// cursor was missed (a load-balanced node listed a payment only after the
// scan had passed its slot): the scanner replays from From, as a rescan
// request does, and the replay records it.
type RescanError struct {
	From   Height
	Reason string
}

func (e *RescanError) Error() string {
	return fmt.Sprintf("rescan from %d: %s", e.From, e.Reason)
}
