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
