package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartBlocks applies a catch-up batch of network's cursor and block refs
// in one round trip: it locks and returns the cursor as it was
// (CursorForUpdate, with the fence's check), records the node's tips (SetTips) and moves the cursor
// onto the batch's last block (SetCursor) in one update, stores the block
// refs (PutBlocks), forgets those below pruneBelow and orphans the
// transfers recorded at these heights in other blocks (a rescan across a
// reorg), which it returns, in one statement. The caller checks that the
// blocks extend the returned cursor and fails the transaction otherwise:
// the cursor written here is then rolled back with the rest. Nothing in the
// transaction reads the cursor's height, hash or last block time, or the
// blocks table, so moving the cursor here rather than last changes no
// result; it is one update of the cursor row instead of two (the row has
// update triggers).
func (t *Tx) StartBlocks(ctx context.Context, network string, node, final int64, bs []BlockRef, at []time.Time,
	pruneBelow int64, now time.Time) (Cursor, []Transfer, error) {
	r, err := t.StartBlocksWith(ctx, network, node, final, bs, at, pruneBelow, now, StartReads{})
	return r.Cursor, r.Replaced, err
}

// StartReads are reads StartBlocksWith sends in its round trip, after its
// writes.
type StartReads struct {
	// Keys are the keys of the addresses the batch's transfers pay: their
	// addresses, with their intents, are read as AddressesByKeys reads
	// them.
	Keys [][]byte
	// Confirm promotes the transfers that reached their confirmations at
	// the batch's tips, as ConfirmUpTo(node, final) does: for a batch that
	// records no transfer, nothing after the writes changes what it
	// promotes.
	Confirm bool
}

// StartResult is what StartBlocksWith read.
type StartResult struct {
	// Cursor is the cursor as it was, Replaced the transfers orphaned.
	Cursor   Cursor
	Replaced []Transfer
	// Known are the addresses of StartReads.Keys by key (as a string).
	Known map[string]Address
	// Confirmed are the transfers promoted (StartReads.Confirm).
	Confirmed []Transfer
}

// StartBlocksWith is StartBlocks with the reads of r in the same round
// trip.
func (t *Tx) StartBlocksWith(ctx context.Context, network string, node, final int64, bs []BlockRef, at []time.Time,
	pruneBelow int64, now time.Time, r StartReads) (StartResult, error) {
	heights := make([]int64, len(bs))
	hashes := make([]string, len(bs))
	parents := make([]string, len(bs))
	for i, b := range bs {
		heights[i], hashes[i], parents[i] = b.Height, b.Hash, b.Parent
	}
	top, blockAt := bs[len(bs)-1], at[len(at)-1]
	var c Cursor
	var ids []string
	b := &pgx.Batch{}
	lock, args, f := t.lockCursor(network)
	b.Queue(lock, args...).
		QueryRow(func(row pgx.Row) error {
			return row.Scan(&c.Network, &c.Height, &c.Hash, &c.NodeHeight, &c.FinalHeight, &c.LastBlockAt, &c.Healthy,
				&c.LastError, &c.Critical, &c.Leader, &c.RescanFrom, &c.UpdatedAt)
		})
	b.Queue(`UPDATE cursors SET node_height = $2, final_height = $3, height = $4, hash = $5,
		last_block_at = coalesce($6, last_block_at), updated_at = $7 WHERE network = $1`,
		network, node, final, top.Height, top.Hash, &blockAt, now)
	// One statement for the block refs and the transfers: refs below
	// pruneBelow are deleted and none of them is inserted (the refs left
	// are those of inserting every ref and then deleting below
	// pruneBelow: the two parts touch disjoint rows), and the transfers
	// recorded at these heights in other blocks are orphaned (nothing
	// that updates transfers reads the refs).
	b.Queue(`WITH pruned AS (DELETE FROM blocks WHERE network = $1 AND height < $7),
		stored AS (INSERT INTO blocks (network, height, hash, parent_hash, time)
			SELECT $1, u.height, u.hash, u.parent, u.time FROM unnest($2::bigint[], $3::text[], $4::text[], $5::timestamptz[]) AS u(height, hash, parent, time)
			WHERE u.height >= $7
			ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time)
		UPDATE transfers SET status = 'orphaned', confirmed_at = NULL, updated_at = $6
		FROM unnest($2::bigint[], $3::text[]) AS b(height, hash)
		WHERE transfers.network = $1 AND transfers.block_height = b.height AND transfers.block_hash <> b.hash
			AND transfers.status <> 'orphaned' RETURNING transfers.id`, network, heights, hashes, parents, at, now, pruneBelow).
		Query(func(rows pgx.Rows) error {
			var err error
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	var known map[string]Address
	if len(r.Keys) > 0 {
		b.Queue(addressesByKeysSQL, network, r.Keys).Query(func(rows pgx.Rows) error {
			var err error
			known, err = scanAddressesByKeys(rows, len(r.Keys))
			return err
		})
	}
	var confirmed []string
	if r.Confirm {
		b.Queue(confirmUpToSQL, network, node, final, now).Query(func(rows pgx.Rows) error {
			var err error
			confirmed, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	}
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return StartResult{}, t.fencedNotFound(ctx, f, err)
	}
	res := StartResult{Cursor: c, Known: known}
	if len(ids) == 0 && len(confirmed) == 0 {
		return res, nil
	}
	// The orphaned and the promoted transfers in one read (a transfer
	// orphaned here is not confirming: it is never both).
	rows, err := t.tx.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.id = ANY($1) ORDER BY t.first_seen_at, t.id`, append(ids, confirmed...))
	if err != nil {
		return StartResult{}, translate(err)
	}
	trs, err := scanTransfers(rows)
	if err != nil {
		return StartResult{}, err
	}
	orphaned := make(map[string]bool, len(ids))
	for _, id := range ids {
		orphaned[id] = true
	}
	for _, tr := range trs {
		if orphaned[tr.ID] {
			res.Replaced = append(res.Replaced, tr)
		} else {
			res.Confirmed = append(res.Confirmed, tr)
		}
	}
	return res, nil
}
