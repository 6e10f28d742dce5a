package store

import (
	"context"
	"time"
)

// PutBlocks records several block refs in one statement (a catch-up
// batch); at[i] is the time of bs[i].
func (t *Tx) PutBlocks(ctx context.Context, network string, bs []BlockRef, at []time.Time) error {
	heights := make([]int64, len(bs))
	hashes := make([]string, len(bs))
	parents := make([]string, len(bs))
	for i, b := range bs {
		heights[i], hashes[i], parents[i] = b.Height, b.Hash, b.Parent
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO blocks (network, height, hash, parent_hash, time)
		SELECT $1, u.height, u.hash, u.parent, u.time FROM unnest($2::bigint[], $3::text[], $4::text[], $5::timestamptz[]) AS u(height, hash, parent, time)
		ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time`,
		network, heights, hashes, parents, at)
	return translate(err)
}

// OrphanReplacedBlocks is OrphanReplaced for several blocks at once: the
// transfers of network recorded at heights[i] in another block than
// hashes[i] are orphaned and returned.
func (t *Tx) OrphanReplacedBlocks(ctx context.Context, network string, heights []int64, hashes []string, now time.Time) ([]Transfer, error) {
	rows, err := t.tx.Query(ctx, `UPDATE transfers SET status = 'orphaned', confirmed_at = NULL, updated_at = $4
		FROM unnest($2::bigint[], $3::text[]) AS b(height, hash)
		WHERE transfers.network = $1 AND transfers.block_height = b.height AND transfers.block_hash <> b.hash
			AND transfers.status <> 'orphaned' RETURNING transfers.id`, network, heights, hashes, now)
	if err != nil {
		return nil, translate(err)
	}
	return t.refetch(ctx, rows)
}
