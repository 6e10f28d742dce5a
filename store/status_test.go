package store_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

// TestStatusFiguresAreTheSingleReads: the one-round-trip reads of GET
// /v1/status (issue 37 item 5) answer what GetCursor, CountAddresses,
// PeekIndex, PoolRemaining, ReconcileRuns, LiveFindingCounts and Findings
// answer one by one.
func TestStatusFiguresAreTheSingleReads(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, devnettest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO addresses (network, key, address, source, created_at)
			SELECT 'litecoin', int8send(i), 'ltc-' || i, 'load', $1 FROM generate_series(1, 30) AS i`,
		`INSERT INTO addresses (network, key, address, source, created_at)
			SELECT 'solana', int8send(i), 'sol-' || i, 'pool', $1 FROM generate_series(1, 7) AS i`,
		`INSERT INTO free_addresses (network, lane, ord, key) SELECT 'solana', '', i, int8send(i) FROM generate_series(1, 5) AS i`,
		`INSERT INTO free_addresses (network, lane, ord, key) SELECT 'solana', 'x', i, int8send(i) FROM generate_series(6, 7) AS i`,
		`INSERT INTO derivation_counters (network, source, next_index) VALUES ('litecoin', 'xpub-a', 41), ('bitcoin', 'xpub-b', 3)`,
		`INSERT INTO reconcile_runs (network, checked_to, runs) VALUES ('bitcoin', 10, 1), ('litecoin', 20, 2)`,
		`INSERT INTO reconcile_findings (id, network, kind, status, created_at, updated_at, fingerprint, range_from, range_to, node_answer, ours)
			SELECT 'rf' || i, 'bitcoin', CASE WHEN i % 2 = 0 THEN 'missing' ELSE 'unexpected' END, CASE WHEN i % 3 = 0 THEN 'resolved' ELSE 'open' END,
				$1::timestamptz + i * interval '1 minute', $1, 'f' || i, i, i, 'node', 'ours'
			FROM generate_series(1, 25) AS i`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, now)
		}
		if _, err := st.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatalf("%v: %s", err, q)
		}
	}
	if err := st.InitCursor(ctx, "litecoin", 7, "h7", now); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHealth(ctx, "litecoin", false, "node down", "", "i1", now, nil); err != nil {
		t.Fatal(err)
	}
	fig, err := st.StatusFigures(ctx, []string{"solana"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"bitcoin", "litecoin", "ethereum", "tron", "solana"} {
		c, err := st.GetCursor(ctx, n)
		got, ok := fig.Cursors[n]
		if errors.Is(err, store.ErrNotFound) != !ok || (ok && !reflect.DeepEqual(got, c)) {
			t.Errorf("%s cursor: figures %v %+v, GetCursor %v %+v", n, ok, got, err, c)
		}
		watched, err := st.CountAddresses(ctx, n)
		if err != nil || fig.Watched[n] != watched {
			t.Errorf("%s watched: figures %d, CountAddresses %d %v", n, fig.Watched[n], watched, err)
		}
	}
	for _, k := range [][2]string{{"litecoin", "xpub-a"}, {"bitcoin", "xpub-b"}, {"ethereum", "xpub-c"}} {
		next, err := st.PeekIndex(ctx, k[0], k[1])
		if err != nil || fig.Next[k] != next {
			t.Errorf("%v next index: figures %d, PeekIndex %d %v", k, fig.Next[k], next, err)
		}
	}
	if rem, err := st.PoolRemaining(ctx, "solana"); err != nil || fig.PoolRemaining["solana"] != rem || rem < 5 {
		t.Errorf("solana pool: figures %d, PoolRemaining %d %v (want 5 or more)", fig.PoolRemaining["solana"], rem, err)
	}
	rec, err := st.StatusReconcile(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.ReconcileRuns(ctx)
	if err != nil || !reflect.DeepEqual(rec.Runs, runs) {
		t.Errorf("runs: figures %+v, ReconcileRuns %+v %v", rec.Runs, runs, err)
	}
	counts, err := st.LiveFindingCounts(ctx)
	if err != nil || !reflect.DeepEqual(rec.Counts, counts) {
		t.Errorf("counts: figures %v, LiveFindingCounts %v %v", rec.Counts, counts, err)
	}
	live, err := st.Findings(ctx, "", "", 20)
	if err != nil || !reflect.DeepEqual(rec.Live, live) || len(live) != 17 {
		t.Errorf("live findings: figures %d, Findings %d %v (want 17)", len(rec.Live), len(live), err)
	}
}
