// Package endpointstest runs a chain's node client through an endpoint
// pool of a faulty and an honest endpoint over a series of fault mixes
// (issue 33 item 7), for the tests of every chain.
package endpointstest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
)

// Everything watches every key, so a block read through the pool and one
// read directly compare in full.
type Everything struct{}

// Contains reports true for every key.
func (Everything) Contains([]byte) bool { return true }

// Mix is one fault of the faulty endpoint and the state the pool must come
// to see it in ("": not checked).
type Mix struct {
	Name  string
	Fault faultyproxy.Fault
	State endpoints.State
}

// Mixes are the faults the faulty endpoint shows in turn.
var Mixes = []Mix{
	{"honest", faultyproxy.Fault{}, endpoints.Healthy},
	{"503", faultyproxy.Fault{Unavailable: true}, endpoints.Unreachable},
	{"429 with Retry-After", faultyproxy.Fault{Throttle: true, RetryAfter: 1}, endpoints.Throttled},
	{"drops connections", faultyproxy.Fault{Drop: true}, endpoints.Unreachable},
	{"lags 3 blocks", faultyproxy.Fault{Lag: 3}, ""},
	{"head backwards", faultyproxy.Fault{Backwards: 1}, ""},
	{"lags 3 blocks again", faultyproxy.Fault{Lag: 3}, ""},
	{"honest again", faultyproxy.Fault{}, endpoints.Healthy},
}

// Setup is what Run drives.
type Setup struct {
	// Faulty is the proxy before the node, endpoint "faulty" of Pool.
	Faulty *faultyproxy.Proxy
	// Src reads through Pool (the faulty endpoint preferred, an honest
	// one after it); Alone through a pool of the faulty endpoint only;
	// Honest from the node directly.
	Src, Alone, Honest chains.Source
	Pool               *endpoints.Pool
	// Step makes block k of mix i, with a payment in it.
	Step func(i, k int)
}

// Run drives the mixes: in each, the pool comes to see the faulty
// endpoint's state and asks it again (detection goes on); four blocks are
// made; every block is read through Src as the scanner does (a failed
// read retried) and must equal the honest node's (nothing missed, doubled
// or different); every block the faulty endpoint alone serves must equal
// it too (nothing paid the honest chain did not pay).
func Run(ctx context.Context, t *testing.T, s Setup) {
	t.Helper()
	next, err := s.Honest.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, mix := range Mixes {
		s.Faulty.Set(mix.Fault)
		waitState(ctx, t, s.Pool, "faulty", mix.State, s.Faulty.Calls)
		for k := 0; k < 4; k++ {
			s.Step(i, k)
		}
		tip, err := s.Honest.Tip(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitTip(ctx, t, s.Src, tip)
		readAll(ctx, t, s.Src, s.Honest, next, tip)
		for h := next; h <= tip; h++ {
			got, err := s.Alone.Block(ctx, h, Everything{})
			if err != nil {
				continue
			}
			want, _ := s.Honest.Block(ctx, h, Everything{})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: block %d from the faulty endpoint alone differs from the honest chain", mix.Name, h)
			}
		}
		st := s.Pool.Status()[0]
		t.Logf("%s: blocks %d..%d read; faulty endpoint asked %d times so far, state %s, errors %d, throttles %d, calls %d, head %d", mix.Name, next, tip, s.Faulty.Calls(), st.State, st.Errors, st.Throttles, st.Calls, st.Head)
		next = tip + 1
	}
}

// pause waits a little between polls of a condition, or until ctx ends.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Millisecond):
	}
}

// readAll reads blocks from..to through src as the scanner does (a failed
// read is retried, "not found" waited out) and checks each against the
// honest node's block.
func readAll(ctx context.Context, t *testing.T, src, honest chains.Source, from, to chains.Height) {
	t.Helper()
	for h := from; h <= to; h++ {
		want, err := honest.Block(ctx, h, Everything{})
		if err != nil {
			t.Fatalf("honest block %d: %v", h, err)
		}
		for {
			got, err := src.Block(ctx, h, Everything{})
			if err == nil {
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("block %d through the pool differs from the honest node's:\n got %+v\nwant %+v", h, got, want)
				}
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("block %d never read through the pool: %v", h, err)
			}
			pause(ctx)
		}
	}
}

// waitTip waits until the pool's tip reaches at least h.
func waitTip(ctx context.Context, t *testing.T, src chains.Source, h chains.Height) {
	t.Helper()
	for {
		tip, err := src.Tip(ctx)
		if err == nil && tip >= h {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the pool's tip never reached %d: %d %v", h, tip, err)
		}
		pause(ctx)
	}
}

// waitState waits until pool sees endpoint name in state want, and has
// asked it again.
func waitState(ctx context.Context, t *testing.T, pool *endpoints.Pool, name string, want endpoints.State, asked func() int) {
	t.Helper()
	before := asked()
	for {
		var got endpoints.State
		for _, s := range pool.Status() {
			if s.Name == name {
				got = s.State
			}
		}
		if (want == "" || got == want) && asked() > before {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("endpoint %s: state %s, want %s; asked %d times, %d before", name, got, want, asked(), before)
		}
		pause(ctx)
	}
}
