package chains

import (
	"context"
	"fmt"

	"github.com/paywatch/paywatch/payment"
)

// BatchSink is a Sink that can apply several consecutive blocks in one
// transaction, all or none. A catch-up then pays one transaction per batch
// of Parallel blocks instead of one per block.
type BatchSink interface {
	// ApplyBlocks applies blocks as ApplyBlock would one after the other:
	// the first extends the cursor and each the one before it.
	ApplyBlocks(ctx context.Context, network payment.Network, blocks []Block, tips Tips) error
}

// apply hands consecutive blocks to the sink, in one transaction when the
// sink is a BatchSink.
func (s *Scanner) apply(ctx context.Context, blocks []Block, tips Tips) error {
	if len(blocks) == 0 {
		return nil
	}
	if bs, ok := s.sink.(BatchSink); ok && len(blocks) > 1 {
		if err := bs.ApplyBlocks(ctx, s.cfg.Network, blocks, tips); err != nil {
			return fmt.Errorf("apply blocks %d-%d: %w", blocks[0].Height, blocks[len(blocks)-1].Height, err)
		}
		return nil
	}
	for _, b := range blocks {
		if err := s.sink.ApplyBlock(ctx, s.cfg.Network, b, tips); err != nil {
			return fmt.Errorf("apply block %d: %w", b.Height, err)
		}
	}
	return nil
}
