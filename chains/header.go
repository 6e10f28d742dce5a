package chains

import "context"

// HeaderSource is implemented by sources that can read a block's identity
// without its transactions (a Bitcoin header, an Ethereum block without
// transactions, a Solana block without details). The scanner needs only the
// identity where it compares hashes: the reorg walk-back, the check of a
// node behind the cursor, and the block below the first height at start-up
// or rescan.
type HeaderSource interface {
	// Header returns the identity of the block at height on the node's best
	// chain; like Source.Block, above the tip is ErrBlockNotFound and a slot
	// without a block is ErrSkipped.
	Header(ctx context.Context, height uint64) (BlockRef, error)
}

// Header returns the identity of the block at height: by HeaderSource when
// src has it, else from the whole block read for no keys.
func Header(ctx context.Context, src Source, height uint64) (BlockRef, error) {
	if hs, ok := src.(HeaderSource); ok {
		return hs.Header(ctx, height)
	}
	b, err := src.Block(ctx, height, noKeys{})
	return b.BlockRef, err
}

// noKeys watches nothing: only the block's identity is wanted.
type noKeys struct{}

func (noKeys) Contains([]byte) bool { return false }
