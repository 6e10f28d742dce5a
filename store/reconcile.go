package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Finding kinds and statuses of the reconciler (migration 0022).
const (
	FindingMissing    = "missing"
	FindingUnexpected = "unexpected"
	FindingMismatch   = "mismatch"
	FindingNodeError  = "node_error"

	FindingRescanning = "rescanning"
	FindingOpen       = "open"
	FindingResolved   = "resolved"
)

// Finding is a difference the reconciler found between the node's view of
// our addresses and what paywatch recorded.
type Finding struct {
	ID          string     `json:"id"`
	Network     string     `json:"network"`
	Kind        string     `json:"kind"`
	Status      string     `json:"status"`
	TxID        string     `json:"txid"`
	Index       int64      `json:"index"`
	Address     string     `json:"address"`
	AddressKey  []byte     `json:"-"`
	BlockHeight *int64     `json:"block_height"`
	RangeFrom   int64      `json:"range_from"`
	RangeTo     int64      `json:"range_to"`
	NodeAnswer  string     `json:"node_answer"`
	Ours        string     `json:"ours"`
	Resolution  string     `json:"resolution"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ResolvedAt  *time.Time `json:"resolved_at"`
}

// fingerprint is what makes two findings the same finding.
func (f Finding) fingerprint() string {
	if f.Kind == FindingNodeError {
		return fmt.Sprintf("range:%d-%d", f.RangeFrom, f.RangeTo)
	}
	return fmt.Sprintf("tx:%s:%d", f.TxID, f.Index)
}

const findingColumns = `id, network, kind, status, txid, idx, address, address_key, block_height, range_from, range_to,
	node_answer, ours, resolution, created_at, updated_at, resolved_at`

func scanFinding(row pgx.Row) (Finding, error) {
	var f Finding
	err := row.Scan(&f.ID, &f.Network, &f.Kind, &f.Status, &f.TxID, &f.Index, &f.Address, &f.AddressKey, &f.BlockHeight,
		&f.RangeFrom, &f.RangeTo, &f.NodeAnswer, &f.Ours, &f.Resolution, &f.CreatedAt, &f.UpdatedAt, &f.ResolvedAt)
	return f, translate(err)
}

// RecordFinding stores f, or, when the same finding is already live (same
// network, kind and transfer, or range for a node error; not resolved),
// refreshes its answers and keeps its id and status. It returns the stored
// finding and whether it is new.
func (s *Store) RecordFinding(ctx context.Context, f Finding, now time.Time) (Finding, bool, error) {
	var id string
	var inserted bool
	err := s.pool.QueryRow(ctx, `INSERT INTO reconcile_findings (id, network, kind, status, txid, idx, address, address_key,
			block_height, range_from, range_to, node_answer, ours, created_at, updated_at, fingerprint)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15)
		ON CONFLICT (network, kind, fingerprint) WHERE status <> 'resolved' DO UPDATE SET
			node_answer = EXCLUDED.node_answer, ours = EXCLUDED.ours, range_to = GREATEST(reconcile_findings.range_to, EXCLUDED.range_to),
			updated_at = EXCLUDED.updated_at
		RETURNING id, (xmax = 0)`,
		NewID("rf"), f.Network, f.Kind, f.Status, f.TxID, f.Index, f.Address, f.AddressKey, f.BlockHeight,
		f.RangeFrom, f.RangeTo, f.NodeAnswer, f.Ours, now, f.fingerprint()).Scan(&id, &inserted)
	if err != nil {
		return Finding{}, false, translate(err)
	}
	stored, err := scanFinding(s.pool.QueryRow(ctx, `SELECT `+findingColumns+` FROM reconcile_findings WHERE id = $1`, id))
	return stored, inserted, err
}

// SetFindingStatus moves a live finding to status with a resolution note.
// A resolved finding stays resolved.
func (s *Store) SetFindingStatus(ctx context.Context, id, status, resolution string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE reconcile_findings SET status = $2::text, resolution = $3, updated_at = $4,
			resolved_at = CASE WHEN $2::text = 'resolved' THEN $4::timestamptz ELSE NULL END
		WHERE id = $1 AND status <> 'resolved'`, id, status, resolution, now)
	return translate(err)
}

// Findings lists findings, newest first: of network ("" for all) and
// status ("" for every status not resolved, "all" for all), at most limit.
func (s *Store) Findings(ctx context.Context, network, status string, limit int) ([]Finding, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+findingColumns+` FROM reconcile_findings
		WHERE ($1 = '' OR network = $1) AND (($2 = '' AND status <> 'resolved') OR $2 = 'all' OR status = $2)
		ORDER BY created_at DESC, id DESC LIMIT $3`, network, status, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []Finding
	for rows.Next() {
		f, err := scanFinding(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, translate(rows.Err())
}

// LiveFindingCounts returns the findings not resolved, per network, kind
// and status.
func (s *Store) LiveFindingCounts(ctx context.Context) (map[[3]string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT network, kind, status, count(*) FROM reconcile_findings
		WHERE status <> 'resolved' GROUP BY network, kind, status`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[[3]string]int64{}
	for rows.Next() {
		var k [3]string
		var n int64
		if err := rows.Scan(&k[0], &k[1], &k[2], &n); err != nil {
			return nil, translate(err)
		}
		out[k] = n
	}
	return out, translate(rows.Err())
}

// ReconcileRun is a network's reconciler progress and last run.
type ReconcileRun struct {
	Network        string     `json:"network"`
	CheckedTo      *int64     `json:"checked_to"`
	LastFrom       *int64     `json:"last_from"`
	LastTo         *int64     `json:"last_to"`
	LastStartedAt  *time.Time `json:"last_started_at"`
	LastFinishedAt *time.Time `json:"last_finished_at"`
	LastBlocks     int64      `json:"last_blocks"`
	LastAddresses  int64      `json:"last_addresses"`
	LastCalls      int64      `json:"last_calls"`
	LastFindings   int64      `json:"last_findings"`
	LastError      string     `json:"last_error"`
	Runs           int64      `json:"runs"`
	RequestedAt    *time.Time `json:"requested_at"`
}

const runColumns = `network, checked_to, last_from, last_to, last_started_at, last_finished_at, last_blocks,
	last_addresses, last_calls, last_findings, last_error, runs, requested_at`

// ReconcileRuns returns every network's reconciler state, by network.
func (s *Store) ReconcileRuns(ctx context.Context) ([]ReconcileRun, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+runColumns+` FROM reconcile_runs ORDER BY network`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []ReconcileRun
	for rows.Next() {
		var r ReconcileRun
		if err := rows.Scan(&r.Network, &r.CheckedTo, &r.LastFrom, &r.LastTo, &r.LastStartedAt, &r.LastFinishedAt,
			&r.LastBlocks, &r.LastAddresses, &r.LastCalls, &r.LastFindings, &r.LastError, &r.Runs, &r.RequestedAt); err != nil {
			return nil, translate(err)
		}
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

// ReconcileRunOf returns one network's reconciler state (ErrNotFound before
// its first run or request).
func (s *Store) ReconcileRunOf(ctx context.Context, network string) (ReconcileRun, error) {
	var r ReconcileRun
	err := s.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM reconcile_runs WHERE network = $1`, network).Scan(
		&r.Network, &r.CheckedTo, &r.LastFrom, &r.LastTo, &r.LastStartedAt, &r.LastFinishedAt,
		&r.LastBlocks, &r.LastAddresses, &r.LastCalls, &r.LastFindings, &r.LastError, &r.Runs, &r.RequestedAt)
	return r, translate(err)
}

// StartReconcileRun records that a run over [from, to] started.
func (s *Store) StartReconcileRun(ctx context.Context, network string, from, to int64, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO reconcile_runs (network, last_from, last_to, last_started_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (network) DO UPDATE SET last_from = $2, last_to = $3, last_started_at = $4`, network, from, to, now)
	return translate(err)
}

// FinishReconcileRun records a run's outcome; a run without error moves
// the progress (checked_to) to its end.
func (s *Store) FinishReconcileRun(ctx context.Context, r ReconcileRun, now time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE reconcile_runs SET last_finished_at = $2, last_blocks = $3, last_addresses = $4,
			last_calls = $5, last_findings = $6, last_error = $7, runs = runs + 1,
			checked_to = CASE WHEN $7 = '' THEN GREATEST(coalesce(checked_to, last_to), last_to) ELSE checked_to END
		WHERE network = $1`, r.Network, now, r.LastBlocks, r.LastAddresses, r.LastCalls, r.LastFindings, r.LastError)
	return translate(err)
}

// RequestReconcile asks the daemon for a run of network as soon as it can
// (idempotent: a pending request stays one request).
func (s *Store) RequestReconcile(ctx context.Context, network string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO reconcile_runs (network, requested_at) VALUES ($1, $2)
		ON CONFLICT (network) DO UPDATE SET requested_at = coalesce(reconcile_runs.requested_at, $2)`, network, now)
	return translate(err)
}

// TakeReconcileRequest clears network's pending request and reports
// whether there was one.
func (s *Store) TakeReconcileRequest(ctx context.Context, network string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE reconcile_runs SET requested_at = NULL WHERE network = $1 AND requested_at IS NOT NULL`, network)
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

// TransfersInBlocks returns network's transfers in blocks [from, to] that
// are not orphaned, to keys only when keys is not nil, in height order.
func (s *Store) TransfersInBlocks(ctx context.Context, network string, from, to int64, keys [][]byte) ([]Transfer, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.network = $1 AND t.block_height BETWEEN $2 AND $3
		AND t.status <> 'orphaned' AND ($4::bytea[] IS NULL OR t.address_key = ANY($4)) ORDER BY t.block_height, t.txid, t.idx`,
		network, from, to, keys)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

// TransferByKey returns network's transfer (txid, index), ErrNotFound when
// there is none.
func (s *Store) TransferByKey(ctx context.Context, network, txid string, index int64) (Transfer, error) {
	return scanTransfer(s.pool.QueryRow(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.network = $1 AND t.txid = $2 AND t.idx = $3`,
		network, txid, index))
}

// SampleAddressKeys returns up to n of network's address keys at random,
// always including the keys that received a transfer in blocks [from, to].
func (s *Store) SampleAddressKeys(ctx context.Context, network string, from, to int64, n int) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, `(SELECT DISTINCT address_key FROM transfers WHERE network = $1 AND block_height BETWEEN $2 AND $3)
		UNION (SELECT key FROM addresses WHERE network = $1 ORDER BY random() LIMIT $4)`, network, from, to, n)
	if err != nil {
		return nil, translate(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	return keys, translate(err)
}

// LowestBlock returns the lowest block ref stored for network, the block
// the scanner started on (or the oldest kept); ErrNotFound when none. The
// blocks above it are the ones scanned.
func (s *Store) LowestBlock(ctx context.Context, network string) (int64, error) {
	var h *int64
	if err := s.pool.QueryRow(ctx, `SELECT min(height) FROM blocks WHERE network = $1`, network).Scan(&h); err != nil {
		return 0, translate(err)
	}
	if h == nil {
		return 0, ErrNotFound
	}
	return *h, nil
}
