package chains_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// freezable is a scripted chain whose node can freeze: Tip then waits
// until it is thawed (a node that accepts connections and never answers).
type freezable struct {
	*chainstest.Fake
	mu     sync.Mutex
	frozen chan struct{}
}

func (f *freezable) freeze() { f.mu.Lock(); f.frozen = make(chan struct{}); f.mu.Unlock() }
func (f *freezable) thaw()   { f.mu.Lock(); close(f.frozen); f.frozen = nil; f.mu.Unlock() }

func (f *freezable) Tip(ctx context.Context) (chains.Height, error) {
	f.mu.Lock()
	c := f.frozen
	f.mu.Unlock()
	if c != nil {
		select {
		case <-c:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return f.Fake.Tip(ctx)
}

// Issue 36 item 8: a frozen node is noticed within two poll intervals of a
// step waiting on it (it took the node call's timeout, about a minute), and
// new intents are refused from then on; once it answers again the network
// is healthy. The scanner's clock is fake: the machine's speed decides
// nothing.
func TestFrozenNodeIsNoticedWithinTwoPollIntervals(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	nc := e.Config.Networks[payment.Litecoin]
	nc.Enabled = true
	const poll = time.Minute
	nc.PollInterval.Duration = poll
	f := &freezable{Fake: chainstest.NewFake(e.Clock.Now)}
	f.Mine(3)
	// Two clocks: clk's only waiter is the scanner's wait between steps,
	// stall's only waiter a step's stall timer.
	clk, stall := clock.NewFake(e.Clock.Now()), clock.NewFake(e.Clock.Now())
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Litecoin, PollInterval: poll, Clock: clk, StallClock: stall},
		f, e.Sink.ScannerSinks(), &ingest.Keys{Store: e.Store}, chains.NewWatchSet(8), nil)
	if got := sc.StallAfter(); got != 2*poll {
		t.Fatalf("StallAfter %s, want two poll intervals", got)
	}
	nets := &availability.Networks{Store: e.Store, Config: e.Config, Clock: clk}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The first step places the cursor and records the network healthy;
	// the scanner then waits a poll interval (one waiter on its clock).
	for err := nets.Available(ctx, payment.Litecoin); err != nil; err = nets.Available(ctx, payment.Litecoin) {
		select {
		case <-ctx.Done():
			t.Fatalf("the network did not become available: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.freeze()
	clk.Advance(poll)
	// The next step waits on the frozen node, its stall timer set.
	if err := stall.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	stall.Advance(2*poll - time.Second)
	if err := nets.Available(ctx, payment.Litecoin); err != nil {
		t.Fatalf("refused before two poll intervals: %v", err)
	}
	stall.Advance(time.Second)
	for {
		err := nets.Available(ctx, payment.Litecoin)
		if err != nil {
			if !strings.Contains(err.Error(), "has not answered for 2m0s") {
				t.Fatalf("refused with %v", err)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("a frozen node was not noticed after two poll intervals")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// It answers again: the step ends, the network is healthy.
	f.thaw()
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := nets.Available(ctx, payment.Litecoin); err != nil {
		t.Fatalf("after the node answered again: %v", err)
	}
}
