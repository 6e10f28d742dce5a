package chains_test

import (
	"context"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// TestAQuietStepReadsTheDatabaseOnce: a scanner step reads its cursor and
// the addresses added since its last refresh in one round trip (issue 37
// item 3). A caught-up step with nothing new on the chain or in the
// mempool then costs that one read and nothing else; an address added
// between two steps is watched after the next one, and a rescan requested
// between two steps is what the next one does.
func TestAQuietStepReadsTheDatabaseOnce(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	nc := e.Config.Networks[payment.Bitcoin]
	set := chains.NewWatchSet(64)
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Chain: nc.Chain, Parallel: nc.Parallel,
		SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight)}, f, e.Sink.ScannerSinks(), &ingest.Keys{Store: e.Store}, set, nil)
	ctx := context.Background()
	scan := func() {
		t.Helper()
		for i := 0; ; i++ {
			caughtUp, err := sc.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if caughtUp {
				return
			}
			if i > 100 {
				t.Fatal("not caught up after 100 steps")
			}
		}
	}
	f.Mine(3)
	scan()
	scan() // the mempool's first empty read is applied; the next ones are not
	pool := e.Store.Pool()
	before := pool.Stat().AcquireCount()
	const steps = 5
	for range steps {
		if caughtUp, err := sc.Step(ctx); err != nil || !caughtUp {
			t.Fatalf("quiet step: caught up %v, %v", caughtUp, err)
		}
	}
	if got := pool.Stat().AcquireCount() - before; got != steps {
		t.Fatalf("%d quiet steps took %d round trips to the database, want one each", steps, got)
	}

	// An address added between two steps is watched after the next one.
	key := []byte("an address added between two steps")
	err := e.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.AddAddresses(ctx, []store.Address{{Network: "bitcoin", Key: key, Address: "bc1-added-between-steps",
			Source: "import", Index: -1, CreatedAt: e.Clock.Now()}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if set.Contains(key) {
		t.Fatal("the key is watched before any step")
	}
	if _, err := sc.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if !set.Contains(key) {
		t.Fatal("an address added before a step is not watched after it")
	}

	// A rescan requested between two steps is what the next one does.
	if err := e.Store.RequestRescan(ctx, "bitcoin", 2, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if caughtUp, err := sc.Step(ctx); err != nil || caughtUp {
		t.Fatalf("the step after a rescan request: caught up %v, %v", caughtUp, err)
	}
	if c, err := e.Store.GetCursor(ctx, "bitcoin"); err != nil || c.RescanFrom != nil || c.Height != 1 {
		t.Fatalf("after the rescan step: cursor %d, rescan_from %v (%v), want height 1 and no request left", c.Height, c.RescanFrom, err)
	}
	scan()
	if c, err := e.Store.GetCursor(ctx, "bitcoin"); err != nil || c.Height != int64(f.TipHeight()) {
		t.Fatalf("after the rescan: cursor %d, tip %d (%v)", c.Height, f.TipHeight(), err)
	}
}

// hashReads counts a cursor store's reads of stored block hashes.
type hashReads struct {
	chains.CursorStore
	one, ranges int
}

func (h *hashReads) BlockHash(ctx context.Context, n payment.Network, height chains.Height) (string, error) {
	h.one++
	return h.CursorStore.BlockHash(ctx, n, height)
}

func (h *hashReads) BlockHashes(ctx context.Context, n payment.Network, from, to chains.Height) (map[chains.Height]string, error) {
	h.ranges++
	return h.CursorStore.(chains.BlockHashRange).BlockHashes(ctx, n, from, to)
}

// TestAReorgWalkBackReadsTheStoredHashesOnce: a reorg's walk-back reads
// the stored hashes it may compare with in one read, however deep it goes
// within the safety depth, and rewinds to the same common ancestor as a
// read per height did: the replaced block's payment is orphaned and the
// intent it paid reverted (issue 37 item 3).
func TestAReorgWalkBackReadsTheStoredHashesOnce(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	nc := e.Config.Networks[payment.Bitcoin]
	sinks := e.Sink.ScannerSinks()
	reads := &hashReads{CursorStore: sinks.Cursor}
	sinks.Cursor = reads
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Chain: nc.Chain, Parallel: nc.Parallel,
		SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight)}, f, sinks, &ingest.Keys{Store: e.Store}, e.Watch[payment.Bitcoin], nil)
	ctx := context.Background()
	scan := func() {
		t.Helper()
		for i := 0; ; i++ {
			caughtUp, err := sc.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if caughtUp {
				return
			}
			if i > 100 {
				t.Fatal("not caught up after 100 steps")
			}
		}
	}
	f.Mine(5)
	scan()
	v := e.CreateIntent("order", "ORD-WALK", "", "100.00", "BTC")
	f.Mine(1)
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "walk1")
	f.Mine(1)
	scan()
	if got := e.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 {
		t.Fatalf("before the reorg: %s %+v", got.Status, got.Transfers)
	}
	depth := min(3, int(nc.SafetyDepth))
	reads.one, reads.ranges = 0, 0
	f.Reorg(depth, 1, false) // the payment's block is replaced, the payment gone
	scan()
	if reads.one != 0 || reads.ranges != 1 {
		t.Fatalf("a walk-back of depth %d read %d hashes one by one and %d ranges, want one range", depth, reads.one, reads.ranges)
	}
	if got := e.Intent(v.ID); got.Status != "reverted" || len(got.Transfers) != 1 || got.Transfers[0].Status != "orphaned" {
		t.Fatalf("after the reorg: %s %+v", got.Status, got.Transfers)
	}
	if c, err := e.Store.GetCursor(ctx, "bitcoin"); err != nil || c.Height != int64(f.TipHeight()) {
		t.Fatalf("cursor %d, tip %d (%v)", c.Height, f.TipHeight(), err)
	}
}
