package chains_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// fullBlocks records the heights read as whole blocks.
type fullBlocks struct {
	*chainstest.Fake
	mu      sync.Mutex
	heights []chains.Height
}

func (f *fullBlocks) Block(ctx context.Context, h chains.Height, w chains.Watched) (chains.Block, error) {
	f.mu.Lock()
	f.heights = append(f.heights, h)
	f.mu.Unlock()
	return f.Fake.Block(ctx, h, w)
}

func (f *fullBlocks) reset() {
	f.mu.Lock()
	f.heights = nil
	f.mu.Unlock()
}

// TestReorgWalkBackReadsHeadersOnly: a walk-back of depth d compares d+1
// headers (one per step, the common ancestor included) and reads no whole
// block at or below the ancestor; only the replacement blocks above it are
// read in full, to apply them.
func TestReorgWalkBackReadsHeadersOnly(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	src := &fullBlocks{Fake: e.Chains[payment.Bitcoin]}
	sc := e.NewScanner(payment.Bitcoin, src)
	sync := func() {
		t.Helper()
		for range 100 {
			caughtUp, err := sc.Step(context.Background())
			if err != nil {
				t.Fatalf("step: %v", err)
			}
			if caughtUp {
				return
			}
		}
		t.Fatal("not caught up after 100 steps")
	}
	src.Mine(10)
	sync()
	const depth = 3
	ancestor := src.TipHeight() - depth
	headers := src.Headers()
	src.reset()
	src.Reorg(depth, 1, false)
	sync()
	if got := src.Headers() - headers; got != depth+1 {
		t.Fatalf("walk-back read %d headers, want %d (one per height from the old cursor down to the ancestor)", got, depth+1)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	for _, h := range src.heights {
		if h <= ancestor {
			t.Fatalf("whole block %d read at or below the ancestor %d (full reads: %v)", h, ancestor, src.heights)
		}
	}
	for h := ancestor + 1; h <= src.TipHeight(); h++ {
		if !slices.Contains(src.heights, h) {
			t.Fatalf("replacement block %d never read (full reads: %v)", h, src.heights)
		}
	}
	if got := cursorHeight(t, e, payment.Bitcoin); got != int64(src.TipHeight()) {
		t.Fatalf("cursor %d, tip %d", got, src.TipHeight())
	}
}

// TestHeaderFallsBackToBlock: a source without HeaderSource still answers
// chains.Header, from its whole block.
func TestHeaderFallsBackToBlock(t *testing.T) {
	f := chainstest.NewFake(nil)
	f.Mine(2)
	src := struct{ chains.Source }{f} // hides Header
	if _, ok := chains.Source(src).(chains.HeaderSource); ok {
		t.Fatal("the wrapper still has Header")
	}
	got, err := chains.Header(context.Background(), src, 2)
	want, _ := f.Header(context.Background(), 2)
	if err != nil || got != want || f.Fetches() != 1 {
		t.Fatalf("Header = %+v, %v after %d block reads; want %+v from one block read", got, err, f.Fetches(), want)
	}
}
