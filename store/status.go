package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// NetworkFigures is what GET /v1/status shows of the networks, read in one
// round trip (StatusFigures): at 2,000,000 watched addresses each of its
// reads is one index probe, so the answer's cost is its round trips, and
// on a loaded machine every round trip waits for PostgreSQL's turn on a
// core (issue 37 item 5).
type NetworkFigures struct {
	// Cursors are the networks' cursors, by network (a network not
	// scanned yet has none).
	Cursors map[string]Cursor
	// Watched is each network's number of watched addresses
	// (CountAddresses).
	Watched map[string]int64
	// Next is each (network, source)'s next derivation index (PeekIndex;
	// 0 when none was derived).
	Next map[[2]string]int64
	// PoolRemaining is each asked network's free imported addresses
	// (PoolRemaining).
	PoolRemaining map[string]int64
}

// StatusFigures reads every cursor, every network's watched count and
// derivation counters, and the free imported addresses of the networks
// pools names, as GetCursor, CountAddresses, PeekIndex and PoolRemaining
// do, in one round trip.
func (s *Store) StatusFigures(ctx context.Context, pools []string) (NetworkFigures, error) {
	f := NetworkFigures{Cursors: map[string]Cursor{}, Watched: map[string]int64{}, Next: map[[2]string]int64{}, PoolRemaining: map[string]int64{}}
	b := &pgx.Batch{}
	b.Queue(`SELECT network, height, hash, node_height, final_height, last_block_at, healthy,
		last_error, critical, leader, rescan_from, updated_at FROM cursors`)
	b.Queue(`SELECT network, n FROM address_counts`)
	b.Queue(`SELECT network, source, next_index FROM derivation_counters`)
	b.Queue(`SELECT p.network, (SELECT count(*) FROM free_addresses f WHERE f.network = p.network AND f.lane = '')
		FROM unnest($1::text[]) AS p(network)`, pools)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return f, translate(err)
	}
	for rows.Next() {
		var c Cursor
		if err := rows.Scan(&c.Network, &c.Height, &c.Hash, &c.NodeHeight, &c.FinalHeight, &c.LastBlockAt, &c.Healthy,
			&c.LastError, &c.Critical, &c.Leader, &c.RescanFrom, &c.UpdatedAt); err != nil {
			rows.Close()
			return f, translate(err)
		}
		f.Cursors[c.Network] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return f, translate(err)
	}
	if err := scanPairs(br, func(r pgx.Rows) error {
		var n string
		var v int64
		err := r.Scan(&n, &v)
		f.Watched[n] = v
		return err
	}); err != nil {
		return f, err
	}
	if err := scanPairs(br, func(r pgx.Rows) error {
		var n, src string
		var v int64
		err := r.Scan(&n, &src, &v)
		f.Next[[2]string{n, src}] = v
		return err
	}); err != nil {
		return f, err
	}
	if err := scanPairs(br, func(r pgx.Rows) error {
		var n string
		var v int64
		err := r.Scan(&n, &v)
		f.PoolRemaining[n] = v
		return err
	}); err != nil {
		return f, err
	}
	return f, translate(br.Close())
}

// scanPairs reads the next result of br, one call of scan a row.
func scanPairs(br pgx.BatchResults, scan func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return translate(err)
		}
	}
	return translate(rows.Err())
}

// ReconcileFigures is the reconciler part of GET /v1/status: ReconcileRuns,
// LiveFindingCounts and Findings("", "", limit), read in one round trip.
type ReconcileFigures struct {
	Runs   []ReconcileRun
	Counts map[[3]string]int64
	Live   []Finding
}

// StatusReconcile reads ReconcileFigures with the newest limit live
// findings, in one round trip.
func (s *Store) StatusReconcile(ctx context.Context, limit int) (ReconcileFigures, error) {
	f := ReconcileFigures{Counts: map[[3]string]int64{}}
	b := &pgx.Batch{}
	b.Queue(`SELECT ` + runColumns + ` FROM reconcile_runs ORDER BY network`)
	b.Queue(`SELECT network, kind, status, count(*) FROM reconcile_findings
		WHERE status <> 'resolved' GROUP BY network, kind, status`)
	b.Queue(`SELECT `+findingColumns+` FROM reconcile_findings WHERE status <> 'resolved'
		ORDER BY created_at DESC, id DESC LIMIT $1`, limit)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if err := scanPairs(br, func(rows pgx.Rows) error {
		var r ReconcileRun
		err := rows.Scan(&r.Network, &r.CheckedTo, &r.LastFrom, &r.LastTo, &r.LastStartedAt, &r.LastFinishedAt,
			&r.LastBlocks, &r.LastAddresses, &r.LastCalls, &r.LastFindings, &r.LastError, &r.Runs, &r.RequestedAt)
		f.Runs = append(f.Runs, r)
		return err
	}); err != nil {
		return f, err
	}
	if err := scanPairs(br, func(rows pgx.Rows) error {
		var k [3]string
		var n int64
		err := rows.Scan(&k[0], &k[1], &k[2], &n)
		f.Counts[k] = n
		return err
	}); err != nil {
		return f, err
	}
	if err := scanPairs(br, func(rows pgx.Rows) error {
		fd, err := scanFinding(rows)
		f.Live = append(f.Live, fd)
		return err
	}); err != nil {
		return f, err
	}
	return f, translate(br.Close())
}
