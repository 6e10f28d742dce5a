package chains

import (
	"context"
	"fmt"
)

// tipReplaced reports whether the node replaced the cursor's block by
// another at the same height (two miners found a block; the other one won).
// No parent-hash mismatch shows it until a block above is mined, so a caught
// up scanner asks a ChainMembership source about its cursor block on every
// step (one cheap call); other sources see the reorg at the next block.
func (s *Scanner) tipReplaced(ctx context.Context, cur Cursor) (bool, error) {
	m, ok := s.src.(ChainMembership)
	if !ok {
		return false, nil
	}
	known, best, err := m.InBestChain(ctx, cur.Hash)
	if err != nil {
		return false, fmt.Errorf("is block %d on the node's chain: %w", cur.Height, err)
	}
	return known && !best, nil
}
