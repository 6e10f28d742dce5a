package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartBlocks opens a catch-up batch of network in one round trip: it locks
// and returns the cursor as it was (CursorForUpdate), records the node's
// tips (SetTips), the block refs (PutBlocks), and orphans the transfers
// recorded at these heights in other blocks (a rescan across a reorg), which it
// returns. The caller checks that the blocks extend the returned cursor and
// fails the transaction otherwise.
func (t *Tx) StartBlocks(ctx context.Context, network string, node, final int64, bs []BlockRef, at []time.Time,
	now time.Time) (Cursor, []Transfer, error) {
	heights := make([]int64, len(bs))
	hashes := make([]string, len(bs))
	parents := make([]string, len(bs))
	for i, b := range bs {
		heights[i], hashes[i], parents[i] = b.Height, b.Hash, b.Parent
	}
	var c Cursor
	var ids []string
	b := &pgx.Batch{}
	b.Queue(`SELECT network, height, hash, node_height, final_height, last_block_at, healthy,
		last_error, critical, leader, rescan_from, updated_at FROM cursors WHERE network = $1 FOR UPDATE`, network).
		QueryRow(func(row pgx.Row) error {
			return row.Scan(&c.Network, &c.Height, &c.Hash, &c.NodeHeight, &c.FinalHeight, &c.LastBlockAt, &c.Healthy,
				&c.LastError, &c.Critical, &c.Leader, &c.RescanFrom, &c.UpdatedAt)
		})
	b.Queue(`UPDATE cursors SET node_height = $2, final_height = $3, updated_at = $4 WHERE network = $1`, network, node, final, now)
	b.Queue(`INSERT INTO blocks (network, height, hash, parent_hash, time)
		SELECT $1, u.height, u.hash, u.parent, u.time FROM unnest($2::bigint[], $3::text[], $4::text[], $5::timestamptz[]) AS u(height, hash, parent, time)
		ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time`,
		network, heights, hashes, parents, at)
	b.Queue(`UPDATE transfers SET status = 'orphaned', confirmed_at = NULL, updated_at = $4
		FROM unnest($2::bigint[], $3::text[]) AS b(height, hash)
		WHERE transfers.network = $1 AND transfers.block_height = b.height AND transfers.block_hash <> b.hash
			AND transfers.status <> 'orphaned' RETURNING transfers.id`, network, heights, hashes, now).
		Query(func(rows pgx.Rows) error {
			var err error
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return Cursor{}, nil, translate(err)
	}
	if len(ids) == 0 {
		return c, nil, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.id = ANY($1) ORDER BY t.first_seen_at, t.id`, ids)
	if err != nil {
		return Cursor{}, nil, translate(err)
	}
	trs, err := scanTransfers(rows)
	return c, trs, err
}

// FinishBlocks closes a catch-up batch, last in its transaction: the
// cursor moves to (height, hash) (SetCursor) and block refs below
// pruneBelow are forgotten. Nothing is read back, so both statements are
// sent with COMMIT (before the queued event appends), in no round trip of
// their own; an error of theirs is the commit's.
func (t *Tx) FinishBlocks(ctx context.Context, network string, height int64, hash string, blockAt *time.Time,
	pruneBelow int64, now time.Time) error {
	t.tx.queue(`UPDATE cursors SET height = $2, hash = $3, last_block_at = coalesce($4, last_block_at),
		updated_at = $5 WHERE network = $1`, network, height, hash, blockAt, now)
	t.tx.queue(`DELETE FROM blocks WHERE network = $1 AND height < $2`, network, pruneBelow)
	return nil
}
