package chains_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// flakySink fails BlockHash as a dropped database connection would.
type flakySink struct {
	chains.CursorStore
	fail atomic.Bool
}

func (f *flakySink) BlockHash(ctx context.Context, n payment.Network, h chains.Height) (string, error) {
	if f.fail.Load() {
		return "", errors.New("conn closed: unexpected EOF")
	}
	return f.CursorStore.BlockHash(ctx, n, h)
}

// Only "no stored block at that height" may make a walk-back a deep reorg:
// a database error while reading stored hashes is transient, retried, and
// the reorg is then handled normally.
func TestWalkBackStoreErrorIsTransientNotDeepReorg(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-WB", "", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "wb")
	f.Mine(2)
	e.Sync(payment.Bitcoin)
	before := cursorHeight(t, e, payment.Bitcoin)
	f.Reorg(1, 1, true)
	sink := &flakySink{CursorStore: e.Sink}
	sink.fail.Store(true)
	sinks := e.Sink.ScannerSinks()
	sinks.Cursor = sink
	nc := e.Config.Networks["bitcoin"]
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		f, sinks, &ingest.Keys{Store: e.Store}, e.Watch[payment.Bitcoin], nil)
	for i := 0; i < 3; i++ {
		_, err := sc.Step(context.Background())
		if err == nil || errors.Is(err, chains.ErrDeepReorg) {
			t.Fatalf("step %d with a failing store during walk-back: %v, want a transient error", i, err)
		}
	}
	if got := cursorHeight(t, e, payment.Bitcoin); got != before {
		t.Fatalf("cursor moved from %d to %d", before, got)
	}
	sink.fail.Store(false)
	e.Sync(payment.Bitcoin)
	if got := cursorHeight(t, e, payment.Bitcoin); got != int64(f.TipHeight()) {
		t.Fatalf("after the store recovered: cursor %d, tip %d", got, f.TipHeight())
	}
	if n := count(t, e, "SELECT count(*) FROM cursors WHERE critical <> ''"); n != 0 {
		t.Fatal("a transient store error raised a critical state")
	}
}

// Stored block refs are kept for at least the safety depth: a reorg within
// a safety depth above 2,000 blocks still finds its common ancestor.
func TestStoredBlocksCoverASafetyDepthAbove2000(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Litecoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["litecoin"].SafetyDepth = 2500
		c.Networks["litecoin"].Parallel = 64
	}))
	f := e.Chains[payment.Litecoin]
	f.Mine(2600)
	e.Sync(payment.Litecoin)
	f.Reorg(2200, 1, false)
	for i := 0; ; i++ {
		caughtUp, err := e.Scanners[payment.Litecoin].Step(context.Background())
		if err != nil {
			t.Fatalf("step %d after a 2,200-block reorg with safety depth 2,500: %v", i, err)
		}
		if caughtUp {
			break
		}
	}
	if got := cursorHeight(t, e, payment.Litecoin); got != int64(f.TipHeight()) {
		t.Fatalf("cursor %d, tip %d", got, f.TipHeight())
	}
}

// A reorg through a block the node had declared final is a finality
// violation (critical, sticky) even within the configured safety depth.
func TestReorgBelowTheFinalizedHeightIsCritical(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["bitcoin"].SafetyDepth = 50
	}))
	f := e.Chains[payment.Bitcoin]
	f.SetFinal(2)
	f.Mine(10)
	e.Sync(payment.Bitcoin)
	before := cursorHeight(t, e, payment.Bitcoin)
	f.Reorg(4, 1, false) // replaces two blocks the node had called final
	_, err := e.Scanners[payment.Bitcoin].Step(context.Background())
	if !errors.Is(err, chains.ErrFinalityViolation) || !errors.Is(err, chains.ErrDeepReorg) {
		t.Fatalf("step after a reorg below the finalized height: %v, want ErrFinalityViolation", err)
	}
	if got := cursorHeight(t, e, payment.Bitcoin); got != before {
		t.Fatalf("cursor moved from %d to %d through a finality violation", before, got)
	}
	// Above the finalized height, a reorg is an ordinary rewind.
	e2 := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["bitcoin"].SafetyDepth = 50
	}))
	f2 := e2.Chains[payment.Bitcoin]
	f2.SetFinal(5)
	f2.Mine(10)
	e2.Sync(payment.Bitcoin)
	f2.Reorg(4, 1, false)
	e2.Sync(payment.Bitcoin)
	if got := cursorHeight(t, e2, payment.Bitcoin); got != int64(f2.TipHeight()) {
		t.Fatalf("cursor %d, tip %d after a reorg above the finalized height", got, f2.TipHeight())
	}
}

// inconsistent answers, at one height, a block whose parent is not the
// block it serves one height below (a load balancer mixing replicas).
type inconsistent struct {
	*chainstest.Fake
	at chains.Height
}

func (i *inconsistent) Block(ctx context.Context, h chains.Height, w chains.Watched) (chains.Block, error) {
	b, err := i.Fake.Block(ctx, h, w)
	if err == nil && h == i.at {
		b.Parent = "not-the-block-below"
	}
	return b, err
}

// A node that contradicts itself (parent mismatch, cursor block unchanged)
// makes the scanner back off between attempts instead of hot-looping.
func TestInconsistentNodeIsBackedOffNotHotLooped(t *testing.T) {
	const poll = time.Second
	e, waits, steps := scanInconsistentNode(t, poll, time.Minute, 12)
	if len(waits) < steps-1 {
		t.Fatalf("%d steps against an inconsistent node, only %d waits between them (a hot loop)", steps, len(waits))
	}
	if longest := waits[len(waits)-1]; longest < 8*poll {
		t.Fatalf("waits %v do not back off (last %s)", waits, longest)
	}
	if n := count(t, e, "SELECT count(*) FROM cursors WHERE critical <> ''"); n != 0 {
		t.Fatal("an inconsistent node raised a critical state")
	}
}

// scanInconsistentNode runs a Bitcoin scanner against a node that
// contradicts itself for the given number of steps, its waits recorded and
// ended at once; it returns the env, the waits and the steps taken.
func scanInconsistentNode(t *testing.T, poll, maxBackoff time.Duration, stopAt int) (*paywatchtest.Env, []time.Duration, int) {
	t.Helper()
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	f.Mine(3)
	e.Sync(payment.Bitcoin)
	f.Mine(1)
	src := &inconsistent{Fake: f, at: f.TipHeight()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	steps := 0
	nc := e.Config.Networks["bitcoin"]
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth,
		PollInterval: poll, MaxBackoff: maxBackoff,
		Observe: func(err error) {
			steps++
			if steps == stopAt {
				cancel()
			}
		},
		Clock: waitRecorder(func(d time.Duration) { waits = append(waits, d) })}, src, e.Sink.ScannerSinks(), &ingest.Keys{Store: e.Store}, e.Watch[payment.Bitcoin], nil)
	if err := sc.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return e, waits, steps
}

// MaxBackoff caps the retry delay even when the poll interval is longer:
// a failing node is retried within MaxBackoff, not after an hour's poll.
func TestBackoffNeverExceedsMaxBackoffAboveALongPoll(t *testing.T) {
	_, waits, _ := scanInconsistentNode(t, time.Hour, time.Minute, 4)
	if len(waits) == 0 {
		t.Fatal("no wait between failed steps")
	}
	for _, w := range waits {
		if w > time.Minute {
			t.Fatalf("waits %v: a retry waited longer than MaxBackoff (1m)", waits)
		}
	}
}

// waitRecorder is a clock whose waits end at once, each reported first.
type waitRecorder func(d time.Duration)

func (r waitRecorder) Now() time.Time { return time.Now() }
func (r waitRecorder) After(d time.Duration) <-chan time.Time {
	r(d)
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}
func (r waitRecorder) NewTimer(d time.Duration) *clock.Timer { r(d); return clock.Real.NewTimer(0) }
