package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// blockRun returns n empty blocks above (height, hash), each on the one
// before it.
func blockRun(height chains.Height, hash string, n int, tag string, at time.Time) []chains.Block {
	bs := make([]chains.Block, n)
	for i := range bs {
		height++
		bs[i] = chains.Block{BlockRef: chains.BlockRef{Height: height, Hash: fmt.Sprintf("%s-%d", tag, height), Parent: hash}, Time: at}
		hash = bs[i].Hash
	}
	return bs
}

// scanState is what a batch writes besides transfers: the cursor's
// position and tips, the node heights recorded and the block refs kept.
func scanState(t *testing.T, e *paywatchtest.Env) string {
	t.Helper()
	var s string
	err := e.Store.Pool().QueryRow(context.Background(), `SELECT concat_ws('|',
		(SELECT concat_ws(',', height, hash, node_height, final_height, last_block_at, updated_at) FROM cursors WHERE network = 'bitcoin'),
		(SELECT count(*) FROM node_heights WHERE network = 'bitcoin'),
		(SELECT concat_ws(',', count(*), min(height), max(height)) FROM blocks WHERE network = 'bitcoin'))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A batch moves the cursor onto its last block with the node's tips in one
// update of the cursor row (one node height recorded), keeps the block refs
// from max(2000, safety depth + 100) below it up, even when the batch
// itself reaches below that (its own older refs are forgotten too), and a
// batch that does not extend the cursor changes nothing (issue 37 item 3).
func TestApplyBlocksMovesTheCursorOnceAndKeepsTheRecentRefs(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	e.Sync(payment.Bitcoin)
	ctx := context.Background()
	n := payment.Bitcoin
	cur, err := e.Sink.Cursor(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	keep := max(int64(2000), e.Config.Networks[n].SafetyDepth+100)
	bs := blockRun(cur.Height, cur.Hash, int(keep)+10, "batch", at)
	top := bs[len(bs)-1]
	var heights int64
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM node_heights WHERE network = 'bitcoin'`).Scan(&heights); err != nil {
		t.Fatal(err)
	}
	if err := e.Sink.ApplyBlocks(ctx, n, bs, chains.Tips{Node: top.Height + 5, Final: top.Height - 3}); err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now().UTC()
	want := fmt.Sprintf("%d,%s,%d,%d,%s,%s|%d|%d,%d,%d", top.Height, top.Hash, top.Height+5, top.Height-3,
		pgTime(at), pgTime(now), heights+1, keep+1, int64(top.Height)-keep, top.Height)
	if got := scanState(t, e); got != want {
		t.Fatalf("after the batch:\n got %s\nwant %s", got, want)
	}

	before := scanState(t, e)
	stray := blockRun(top.Height, "another-"+top.Hash, 2, "stray", at.Add(time.Hour))
	err = e.Sink.ApplyBlocks(ctx, n, stray, chains.Tips{Node: top.Height + 9, Final: top.Height})
	if !errors.Is(err, ingest.ErrCursorMoved) {
		t.Fatalf("a batch that does not extend the cursor: %v, want ErrCursorMoved", err)
	}
	if got := scanState(t, e); got != before {
		t.Fatalf("a refused batch changed the scan state:\n got %s\nwant %s", got, before)
	}
}

// pgTime is t as concat_ws renders a timestamptz in the test database's
// UTC session.
func pgTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
}

// A rescan's reset moves the cursor, stores the block's ref and clears the
// request; a rewind moves the cursor back and forgets the refs above it:
// each in one update of the cursor row, leaving what the statements they
// replace left (issue 37 item 3).
func TestResetAndRewindMoveTheCursor(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	e.Sync(payment.Bitcoin)
	ctx := context.Background()
	n := payment.Bitcoin
	cur, err := e.Sink.Cursor(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	bs := blockRun(cur.Height, cur.Hash, 5, "run", at)
	top := bs[len(bs)-1]
	if err := e.Sink.ApplyBlocks(ctx, n, bs, chains.Tips{Node: top.Height, Final: cur.Height}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RequestRescan(ctx, string(n), int64(bs[2].Height), e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		t.Helper()
		var s string
		err := e.Store.Pool().QueryRow(ctx, `SELECT concat_ws('|',
			(SELECT concat_ws(',', height, hash, node_height, last_block_at, coalesce(rescan_from::text, 'none'), updated_at) FROM cursors WHERE network = 'bitcoin'),
			(SELECT count(*) FROM node_heights WHERE network = 'bitcoin'),
			(SELECT string_agg(concat_ws(',', height, hash, parent_hash, time), ';' ORDER BY height) FROM blocks WHERE network = 'bitcoin' AND height > $1))`,
			int64(cur.Height)).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var heights int64
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM node_heights WHERE network = 'bitcoin'`).Scan(&heights); err != nil {
		t.Fatal(err)
	}
	ref := func(b chains.Block) string {
		return fmt.Sprintf("%d,%s,%s,%s", b.Height, b.Hash, b.Parent, pgTime(b.Time))
	}
	now := pgTime(e.Clock.Now())

	if err := e.Sink.Reset(ctx, n, bs[1].Height, "reset-hash"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d,reset-hash,%d,%s,none,%s|%d|%s;%d,reset-hash,,0001-01-01 00:00:00+00;%s;%s;%s", bs[1].Height, top.Height,
		pgTime(at), now, heights, ref(bs[0]), bs[1].Height, ref(bs[2]), ref(bs[3]), ref(bs[4]))
	if got := state(); got != want {
		t.Fatalf("after the reset:\n got %s\nwant %s", got, want)
	}

	if err := e.Sink.Rewind(ctx, n, bs[0].Height, bs[0].Hash); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("%d,%s,%d,%s,none,%s|%d|%s", bs[0].Height, bs[0].Hash, top.Height, pgTime(at), now, heights, ref(bs[0]))
	if got := state(); got != want {
		t.Fatalf("after the rewind:\n got %s\nwant %s", got, want)
	}
}
