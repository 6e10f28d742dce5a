package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cursor is a network scanner's position and health.
type Cursor struct {
	Network     string
	Height      int64
	Hash        string
	NodeHeight  int64
	FinalHeight int64
	LastBlockAt *time.Time
	Healthy     bool
	LastError   string
	Critical    string
	Leader      string
	RescanFrom  *int64
	UpdatedAt   time.Time
}

// GetCursor returns the cursor of network; ErrNotFound before the first scan.
func (s *Store) GetCursor(ctx context.Context, network string) (Cursor, error) {
	var c Cursor
	err := s.pool.QueryRow(ctx, `SELECT network, height, hash, node_height, final_height, last_block_at, healthy,
		last_error, critical, leader, rescan_from, updated_at FROM cursors WHERE network = $1`, network).
		Scan(&c.Network, &c.Height, &c.Hash, &c.NodeHeight, &c.FinalHeight, &c.LastBlockAt, &c.Healthy,
			&c.LastError, &c.Critical, &c.Leader, &c.RescanFrom, &c.UpdatedAt)
	return c, translate(err)
}

// CursorAndKeysSince is GetCursor and WatchedKeysSince in one round trip:
// a scanner step reads both before anything else. found is false before
// the first scan (no cursor); the keys are read either way.
func (s *Store) CursorAndKeysSince(ctx context.Context, network string, after int64, fn func(key []byte)) (c Cursor, found bool, last int64, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT network, height, hash, node_height, final_height, last_block_at, healthy,
		last_error, critical, leader, rescan_from, updated_at FROM cursors WHERE network = $1`, network)
	b.Queue(watchedKeysSinceSQL, network, after)
	br := s.pool.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = translate(cerr)
		}
	}()
	err = br.QueryRow().Scan(&c.Network, &c.Height, &c.Hash, &c.NodeHeight, &c.FinalHeight, &c.LastBlockAt, &c.Healthy,
		&c.LastError, &c.Critical, &c.Leader, &c.RescanFrom, &c.UpdatedAt)
	switch {
	case err == nil:
		found = true
	case errors.Is(err, pgx.ErrNoRows):
		err = nil
	default:
		return c, false, after, translate(err)
	}
	rows, err := br.Query()
	if err != nil {
		return c, found, after, translate(err)
	}
	last, err = scanWatchedKeys(rows, after, fn)
	return c, found, last, err
}

// InitCursor creates the cursor of network at (height, hash) unless it exists.
func (s *Store) InitCursor(ctx context.Context, network string, height int64, hash string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO cursors (network, height, hash, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (network) DO NOTHING`, network, height, hash, now)
	return translate(err)
}

// CursorForUpdate locks the cursor row: the scanner's transaction owns it.
// When it is the transaction's first statement after its fence, the
// fence is checked in it (lockCursor).
func (t *Tx) CursorForUpdate(ctx context.Context, network string) (Cursor, error) {
	var c Cursor
	sql, args, f := t.lockCursor(network)
	err := t.tx.QueryRow(ctx, sql, args...).
		Scan(&c.Network, &c.Height, &c.Hash, &c.NodeHeight, &c.FinalHeight, &c.LastBlockAt, &c.Healthy,
			&c.LastError, &c.Critical, &c.Leader, &c.RescanFrom, &c.UpdatedAt)
	return c, t.fencedNotFound(ctx, f, err)
}

// SetCursor moves the cursor of network to (height, hash).
func (t *Tx) SetCursor(ctx context.Context, network string, height int64, hash string, blockAt *time.Time, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE cursors SET height = $2, hash = $3, last_block_at = coalesce($4, last_block_at),
		updated_at = $5 WHERE network = $1`, network, height, hash, blockAt, now)
	return translate(err)
}

// SetTips records the node's best and final heights.
func (t *Tx) SetTips(ctx context.Context, network string, node, final int64, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE cursors SET node_height = $2, final_height = $3, updated_at = $4 WHERE network = $1`, network, node, final, now)
	return translate(err)
}

// SetHealth records the scanner's health. A non-empty critical message is
// sticky: only an operator's rescan clears it.
//
// A network without a cursor yet (its node refused or failing before the
// first block was placed) has its health kept in scanner_health instead
// (PreCursorHealth), in the same statement.
//
// With a fence (a leader's), the record is made only while the fence's
// lease is held; otherwise it fails with ErrFenced and changes nothing.
func (s *Store) SetHealth(ctx context.Context, network string, healthy bool, lastError, critical, leader string, now time.Time, fence *Fence) error {
	var name *string
	var token, idle int64
	if fence != nil {
		name, token, idle = &fence.Name, fence.Token, fence.Idle.Milliseconds()
	}
	_, err := s.pool.Exec(ctx, `WITH f AS (SELECT paywatch_fence($7, $8, $9) AS ok),
		u AS (UPDATE cursors SET healthy = $2, last_error = $3,
			critical = CASE WHEN $4 = '' THEN critical ELSE $4 END, leader = $5, updated_at = $6
			FROM f WHERE network = $1 AND f.ok RETURNING 1)
		INSERT INTO scanner_health (network, healthy, last_error, critical, leader, updated_at)
		SELECT $1, $2, $3, $4, $5, $6 FROM f WHERE f.ok AND NOT EXISTS (SELECT 1 FROM u)
		ON CONFLICT (network) DO UPDATE SET healthy = EXCLUDED.healthy, last_error = EXCLUDED.last_error,
			critical = EXCLUDED.critical, leader = EXCLUDED.leader, updated_at = EXCLUDED.updated_at`,
		network, healthy, lastError, critical, leader, now, name, token, idle)
	return translate(err)
}

// PreCursorHealth returns the health a scanner reported while network had
// no cursor (SetHealth), ErrNotFound when it reported none. Only Healthy,
// LastError, Critical, Leader and UpdatedAt are set. A critical state here
// is not sticky: the scanner checks its node again on every step.
func (s *Store) PreCursorHealth(ctx context.Context, network string) (Cursor, error) {
	c := Cursor{Network: network}
	err := s.pool.QueryRow(ctx, `SELECT healthy, last_error, critical, leader, updated_at FROM scanner_health WHERE network = $1`,
		network).Scan(&c.Healthy, &c.LastError, &c.Critical, &c.Leader, &c.UpdatedAt)
	return c, translate(err)
}

// RescanRangeError refuses a rescan start outside 0 … Max: Max is the
// scanned height + 1 but never above the node's last seen tip, so a rescan
// neither skips unread blocks nor starts where the node has no block.
type RescanRangeError struct {
	From, Max, Scanned, NodeTip int64
}

func (e *RescanRangeError) Error() string {
	return fmt.Sprintf("from_height %d is out of range: it must be between 0 and %d (the scanned height %d + 1, never above the node's tip %d)",
		e.From, e.Max, e.Scanned, e.NodeTip)
}

// RequestRescan asks the scanner of network to rescan from height; it clears
// a sticky critical state, since the operator looked at it. A height outside
// the range (RescanRangeError) changes nothing: the check and the write are
// one statement.
func (s *Store) RequestRescan(ctx context.Context, network string, from int64, now time.Time) error {
	var scanned, tip int64
	var done bool
	err := s.pool.QueryRow(ctx, `WITH c AS (SELECT height, node_height FROM cursors WHERE network = $1 FOR UPDATE),
		u AS (UPDATE cursors SET rescan_from = $2, critical = '', updated_at = $3
			WHERE network = $1 AND $2 >= 0 AND $2 <= (SELECT least(height + 1, greatest(node_height, height)) FROM c)
			RETURNING 1)
		SELECT height, node_height, EXISTS (SELECT 1 FROM u) FROM c`, network, from, now).Scan(&scanned, &tip, &done)
	if err != nil {
		return translate(err)
	}
	if !done {
		return &RescanRangeError{From: from, Max: min(scanned+1, max(tip, scanned)), Scanned: scanned, NodeTip: tip}
	}
	return nil
}

// ResetCursor moves the cursor of network to the block b for a rescan,
// storing b's ref (PutBlock with time at), and clears the rescan request:
// one statement and one update of the cursor row (it has update triggers).
func (t *Tx) ResetCursor(ctx context.Context, network string, b BlockRef, at, now time.Time) error {
	_, err := t.tx.Exec(ctx, resetCursorSQL, network, b.Height, b.Hash, b.Parent, at, now)
	return translate(err)
}

// QueueResetCursor is ResetCursor sent with the transaction's next
// statement or its commit, whichever comes first; that call reports its
// failure.
func (t *Tx) QueueResetCursor(network string, b BlockRef, at, now time.Time) {
	t.tx.queue(resetCursorSQL, network, b.Height, b.Hash, b.Parent, at, now)
}

const resetCursorSQL = `WITH ref AS (INSERT INTO blocks (network, height, hash, parent_hash, time) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time)
		UPDATE cursors SET height = $2, hash = $3, rescan_from = NULL, updated_at = $6 WHERE network = $1`

// BlockRef is a stored block reference.
type BlockRef struct {
	Height int64
	Hash   string
	Parent string
}

// PutBlock stores the reference of the block at height (replacing another
// block at that height).
func (t *Tx) PutBlock(ctx context.Context, network string, b BlockRef, at time.Time) error {
	_, err := t.tx.Exec(ctx, putBlockSQL, network, b.Height, b.Hash, b.Parent, at)
	return translate(err)
}

const putBlockSQL = `INSERT INTO blocks (network, height, hash, parent_hash, time) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time`

// RewindCursor moves the cursor of network back to (height, hash) and
// forgets the block refs above height (a rewind), in one statement.
func (t *Tx) RewindCursor(ctx context.Context, network string, height int64, hash string, now time.Time) error {
	_, err := t.tx.Exec(ctx, rewindCursorSQL, network, height, hash, now)
	return translate(err)
}

// QueueRewindCursor is RewindCursor sent with the transaction's next
// statement or its commit, whichever comes first; that call reports its
// failure.
func (t *Tx) QueueRewindCursor(network string, height int64, hash string, now time.Time) {
	t.tx.queue(rewindCursorSQL, network, height, hash, now)
}

const rewindCursorSQL = `WITH gone AS (DELETE FROM blocks WHERE network = $1 AND height > $2)
		UPDATE cursors SET height = $2, hash = $3, updated_at = $4 WHERE network = $1`

// BlockAt returns the stored block ref at height.
func (s *Store) BlockAt(ctx context.Context, network string, height int64) (BlockRef, error) {
	var b BlockRef
	err := s.pool.QueryRow(ctx, `SELECT height, hash, parent_hash FROM blocks WHERE network = $1 AND height = $2`, network, height).
		Scan(&b.Height, &b.Hash, &b.Parent)
	return b, translate(err)
}

// BlockHashes returns the stored hashes of network's blocks from height
// from to height to, by height (a height without a stored block has no
// entry).
func (s *Store) BlockHashes(ctx context.Context, network string, from, to int64) (map[int64]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT height, hash FROM blocks WHERE network = $1 AND height BETWEEN $2 AND $3`, network, from, to)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var h int64
		var hash string
		if err := rows.Scan(&h, &hash); err != nil {
			return nil, translate(err)
		}
		out[h] = hash
	}
	return out, translate(rows.Err())
}

// NodeHeight returns the node height last recorded for network (0 before
// the first scan); confirmations are counted from it.
func (t *Tx) NodeHeight(ctx context.Context, network string) (int64, error) {
	var h int64
	err := t.tx.QueryRow(ctx, `SELECT coalesce((SELECT node_height FROM cursors WHERE network = $1), 0)`, network).Scan(&h)
	return h, translate(err)
}

// NodeHeight returns the node height last recorded for network.
func (s *Store) NodeHeight(ctx context.Context, network string) (int64, error) {
	var h int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT node_height FROM cursors WHERE network = $1), 0)`, network).Scan(&h)
	return h, translate(err)
}

// InitCursor creates the cursor inside a transaction unless it exists.
func (t *Tx) InitCursor(ctx context.Context, network string, height int64, hash string, now time.Time) error {
	_, err := t.tx.Exec(ctx, initCursorSQL, network, height, hash, now)
	return translate(err)
}

// QueueInitCursor is InitCursor at the block ref b (stored as PutBlock
// stores it, at time at), both statements sent with the transaction's next
// statement or its commit, whichever comes first; that call reports their
// failure.
func (t *Tx) QueueInitCursor(network string, b BlockRef, at, now time.Time) {
	t.tx.queue(initCursorSQL, network, b.Height, b.Hash, now)
	t.tx.queue(putBlockSQL, network, b.Height, b.Hash, b.Parent, at)
}

const initCursorSQL = `INSERT INTO cursors (network, height, hash, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (network) DO NOTHING`
