package endpointstest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// everything is a source whose blocks carry every transfer, whatever the
// scanner watches, so what a scanner applies compares in full with the
// honest node's blocks. It hides the source's other capabilities: the
// scanner reads block by block.
type everything struct{ src chains.Source }

func (e everything) Tip(ctx context.Context) (chains.Height, error) { return e.src.Tip(ctx) }
func (e everything) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	return e.src.FinalizedHeight(ctx)
}
func (e everything) Block(ctx context.Context, h chains.Height, _ chains.Watched) (chains.Block, error) {
	return e.src.Block(ctx, h, Everything{})
}

// everythingHeaders is everything with the source's header reads (the
// scanner's walk-back and its check of a node behind it).
type everythingHeaders struct {
	everything
	h chains.HeaderSource
}

func (e everythingHeaders) Header(ctx context.Context, h chains.Height) (chains.BlockRef, error) {
	return e.h.Header(ctx, h)
}

// forScan is src as the scanner over it sees it.
func forScan(src chains.Source) chains.Source {
	if h, ok := src.(chains.HeaderSource); ok {
		return everythingHeaders{everything{src}, h}
	}
	return everything{src}
}

// memSink is a scanner's cursor and chain in memory: the blocks applied
// on the current chain, and what would be a double or a rewind.
type memSink struct {
	mu      sync.Mutex
	cur     chains.Cursor
	blocks  map[chains.Height]chains.Block
	doubles []string
	rewinds []string
	at      map[chains.Height]time.Time // when each height was applied
}

func newMemSink(h chains.Height, hash string) *memSink {
	return &memSink{cur: chains.Cursor{Height: h, Hash: hash}, blocks: map[chains.Height]chains.Block{h: {BlockRef: chains.BlockRef{Height: h, Hash: hash}}},
		at: map[chains.Height]time.Time{}}
}

func (m *memSink) Cursor(context.Context, payment.Network) (chains.Cursor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur, nil
}

func (m *memSink) InitCursor(_ context.Context, _ payment.Network, h chains.Height, hash string) error {
	return fmt.Errorf("the cursor is placed already")
}

func (m *memSink) Reset(_ context.Context, _ payment.Network, h chains.Height, hash string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rewinds = append(m.rewinds, fmt.Sprintf("reset to %d", h))
	m.cutLocked(h, hash)
	return nil
}

func (m *memSink) cutLocked(h chains.Height, hash string) {
	for k := range m.blocks {
		if k > h {
			delete(m.blocks, k)
		}
	}
	m.cur = chains.Cursor{Height: h, Hash: hash}
}

func (m *memSink) BlockHash(_ context.Context, _ payment.Network, h chains.Height) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.blocks[h]; ok {
		return b.Hash, nil
	}
	return "", fmt.Errorf("height %d: %w", h, chains.ErrNoStoredBlock)
}

func (m *memSink) ApplyBlock(_ context.Context, _ payment.Network, b chains.Block, _ chains.Tips) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blocks[b.Height]; ok {
		m.doubles = append(m.doubles, fmt.Sprintf("block %d applied twice", b.Height))
	}
	m.blocks[b.Height] = b
	m.at[b.Height] = time.Now()
	m.cur = chains.Cursor{Height: b.Height, Hash: b.Hash}
	return nil
}

func (m *memSink) Rewind(_ context.Context, _ payment.Network, h chains.Height, hash string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rewinds = append(m.rewinds, fmt.Sprintf("rewind from %d to %d", m.cur.Height, h))
	m.cutLocked(h, hash)
	return nil
}

func (m *memSink) ApplyTips(context.Context, payment.Network, chains.Tips) error { return nil }
func (m *memSink) ApplyPending(context.Context, payment.Network, []chains.Transfer) error {
	return nil
}
func (m *memSink) SetHealth(context.Context, payment.Network, chains.Health) error { return nil }

// scan runs a scanner over src from just above height h (whose hash is
// hash) until ctx ends, into a memSink it returns.
func scan(ctx context.Context, n payment.Network, src chains.Source, h chains.Height, hash string) *memSink {
	sink := newMemSink(h, hash)
	sc := chains.NewScanner(chains.ScannerConfig{Network: n, PollInterval: 50 * time.Millisecond, Parallel: 4, SafetyDepth: 50, MaxBackoff: 200 * time.Millisecond},
		forScan(src), chains.Sinks{Cursor: sink, Chain: sink, Health: sink}, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go sc.Run(ctx)
	return sink
}

// check compares every block the sink holds from from to to with the
// honest node's: none different, none applied twice, no rewind (the
// chain never reorganised). With complete, every height must be there
// (nothing missed).
func (m *memSink) check(t *testing.T, what string, honest func(chains.Height) chains.Block, from, to chains.Height, complete bool) {
	t.Helper()
	m.mu.Lock()
	blocks := make(map[chains.Height]chains.Block, len(m.blocks))
	for k, v := range m.blocks {
		blocks[k] = v
	}
	doubles, rewinds := append([]string(nil), m.doubles...), append([]string(nil), m.rewinds...)
	m.mu.Unlock()
	if len(doubles) > 0 || len(rewinds) > 0 {
		t.Fatalf("%s: the scanner applied a block twice or rewound a chain that never reorganised: %v %v", what, doubles, rewinds)
	}
	for h := from; h <= to; h++ {
		got, ok := blocks[h]
		if !ok {
			if complete {
				t.Fatalf("%s: the scanner's cursor passed height %d without its block", what, h)
			}
			continue
		}
		if want := honest(h); !SameBlock(got, want) {
			t.Fatalf("%s: the scanner applied block %d differing from the honest node's:\n got %+v\nwant %+v", what, h, got, want)
		}
	}
}

// waitCursor waits until the sink's cursor reaches h.
func (m *memSink) waitCursor(ctx context.Context, t *testing.T, what string, h chains.Height) {
	t.Helper()
	for {
		m.mu.Lock()
		c := m.cur.Height
		m.mu.Unlock()
		if c >= h {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: the scanner never reached height %d (cursor %d): detection stopped", what, h, c)
		}
		pause(ctx)
	}
}

// cursor is the sink's cursor height.
func (m *memSink) cursor() chains.Height {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur.Height
}

// Scanned is a real chains.Scanner over a source, applying into memory,
// for the benchmarks of detection.
type Scanned struct{ sink *memSink }

// Scan runs a scanner (polling every 50ms) over src from just above block
// base until ctx ends.
func Scan(ctx context.Context, n payment.Network, src chains.Source, base chains.BlockRef) *Scanned {
	return &Scanned{sink: scan(ctx, n, src, base.Height, base.Hash)}
}

// WaitApplied waits until the scanner has applied height h and returns
// when it did.
func (s *Scanned) WaitApplied(ctx context.Context, h chains.Height) (time.Time, error) {
	for {
		s.sink.mu.Lock()
		at, ok := s.sink.at[h]
		s.sink.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("block %d never applied: %w", h, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// DetectionP95 runs a scanner over src from the node's tip (tip: its
// height on the honest node, which src is waited on to reach), mines n
// blocks one at a time with mine (each with a payment), each waited until
// the scanner applied it, and returns the 95th percentile of the time
// from mining to applying (detection latency).
func DetectionP95(ctx context.Context, t testing.TB, network payment.Network, src chains.Source, tip chains.Height, n int, mine func()) time.Duration {
	t.Helper()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var base chains.Block
	for {
		got, err := src.Tip(ctx)
		if err == nil && got >= tip {
			if base, err = src.Block(ctx, tip, Everything{}); err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the pool never served block %d: %v", tip, err)
		}
		pause(ctx)
	}
	sc := Scan(sctx, network, src, base.BlockRef)
	lat := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		mine()
		at, err := sc.WaitApplied(ctx, tip+chains.Height(i)+1)
		if err != nil {
			t.Fatal(err)
		}
		lat = append(lat, at.Sub(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[min(len(lat)-1, len(lat)*95/100)]
}

// ReportDetection reports detection p95s (healthy, the preferred endpoint
// down, lagging) and their ratios to healthy as benchmark metrics.
func ReportDetection(b *testing.B, healthy, down, lagging time.Duration) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(healthy), "p95_healthy_ms")
	b.ReportMetric(ms(down), "p95_down_ms")
	b.ReportMetric(ms(lagging), "p95_lagging_ms")
	b.ReportMetric(float64(down)/float64(healthy), "down/healthy")
	b.ReportMetric(float64(lagging)/float64(healthy), "lagging/healthy")
}
