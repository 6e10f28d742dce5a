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
