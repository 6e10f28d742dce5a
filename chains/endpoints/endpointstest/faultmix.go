// Package endpointstest runs a chain's node client through an endpoint
// pool of a faulty and an honest endpoint over a series of fault mixes,
// fixed and generated from a seed (issue 33 item 7), for the tests of
// every chain.
package endpointstest

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// Everything watches every key, so a block read through the pool and one
// read directly compare in full.
type Everything struct{}

// Contains reports true for every key.
func (Everything) Contains([]byte) bool { return true }

// Mix is one fault of the faulty endpoint and the state the pool must come
// to see it in ("": not checked). A generated mix changes the fault at
// every block it makes: Over holds them (nil: Fault throughout).
type Mix struct {
	Name  string
	Fault faultyproxy.Fault
	State endpoints.State
	Over  []faultyproxy.Fault
}

// Mixes are the faults the faulty endpoint shows in turn before the
// generated ones.
var Mixes = []Mix{
	{Name: "honest", Fault: faultyproxy.Fault{}, State: endpoints.Healthy},
	{Name: "503", Fault: faultyproxy.Fault{Unavailable: true}, State: endpoints.Unreachable},
	{Name: "429 with Retry-After", Fault: faultyproxy.Fault{Throttle: true, RetryAfter: 1}, State: endpoints.Throttled},
	{Name: "drops connections", Fault: faultyproxy.Fault{Drop: true}, State: endpoints.Unreachable},
	{Name: "lags 3 blocks", Fault: faultyproxy.Fault{Lag: 3}},
	{Name: "head backwards", Fault: faultyproxy.Fault{Backwards: 1}},
	{Name: "load balancer with a backend 3 behind", Fault: faultyproxy.Fault{Stale: 3}},
	{Name: "lags 3 blocks again", Fault: faultyproxy.Fault{Lag: 3}},
	{Name: "honest again", Fault: faultyproxy.Fault{}, State: endpoints.Healthy},
}

// The generator's flags: how many mixes after the fixed ones, and their
// seed. A failure prints the seed and the flags that run it again.
var (
	mixCount = flag.Int("faultmixes", 2, "generated fault mixes each endpoint-pool fault test runs after the fixed ones (issue 33 item 7)")
	mixSeed  = flag.Int64("faultseed", 0, "seed of the generated fault mixes (0: a new one each run)")
)

// StepsPerMix is how many blocks a mix makes.
const StepsPerMix = 4

// Generate returns n mixes drawn from seed: at each block, the faulty
// endpoint lags 0 to 5 blocks, serves every other call from a backend 1 to
// 4 blocks further behind (a load balancer), moves its head backwards,
// slows, and answers 503, 429 (Retry-After 0 or 1 s) or drops the
// connection, each by chance and several at once.
func Generate(seed int64, n int) []Mix {
	r := rand.New(rand.NewSource(seed))
	out := make([]Mix, n)
	for i := range out {
		m := Mix{Over: make([]faultyproxy.Fault, StepsPerMix)}
		var names []string
		for k := range m.Over {
			f := randomFault(r)
			m.Over[k] = f
			names = append(names, describe(f))
		}
		m.Name = fmt.Sprintf("generated %d of seed %d: %s", i+1, seed, strings.Join(names, " | "))
		out[i] = m
	}
	return out
}

func randomFault(r *rand.Rand) faultyproxy.Fault {
	var f faultyproxy.Fault
	switch r.Intn(8) {
	case 0:
		f.Unavailable = true
	case 1:
		f.Throttle, f.RetryAfter = true, r.Intn(2)
	case 2:
		f.Drop = true
	}
	if r.Intn(2) == 0 {
		f.Lag = int64(r.Intn(6))
	}
	if r.Intn(3) == 0 {
		f.Stale = int64(1 + r.Intn(4))
	}
	if r.Intn(6) == 0 {
		f.Backwards = int64(1 + r.Intn(3))
	}
	if r.Intn(6) == 0 {
		f.Slow = time.Duration(5+r.Intn(30)) * time.Millisecond
	}
	return f
}

// describe names a fault for the log.
func describe(f faultyproxy.Fault) string {
	var parts []string
	add := func(ok bool, s string) {
		if ok {
			parts = append(parts, s)
		}
	}
	add(f.Unavailable, "503")
	add(f.Throttle, fmt.Sprintf("429 Retry-After %d", f.RetryAfter))
	add(f.Drop, "drop")
	add(f.Lag > 0, fmt.Sprintf("lag %d", f.Lag))
	add(f.Stale > 0, fmt.Sprintf("stale backend %d behind", f.Stale))
	add(f.Backwards > 0, fmt.Sprintf("head back to %d", f.Backwards))
	add(f.Slow > 0, fmt.Sprintf("slow %s", f.Slow))
	if len(parts) == 0 {
		return "honest"
	}
	return strings.Join(parts, "+")
}

// Setup is what Run drives.
type Setup struct {
	Network payment.Network
	// Faulty is the proxy before the node, endpoint "faulty" of Pool;
	// FaultyAlone another before the same node, the endpoint of Alone
	// (the same faults at the same time).
	Faulty, FaultyAlone *faultyproxy.Proxy
	// Src reads through Pool (the faulty endpoint preferred, an honest
	// one after it); Alone through a pool of the faulty endpoint only;
	// Honest from the node directly.
	Src, Alone, Honest chains.Source
	Pool               *endpoints.Pool
	// Rate and Burst are the faulty endpoint's token bucket in Pool: the
	// requests Faulty gets may never exceed it (0: not checked).
	Rate  float64
	Burst int
	// Step makes block k of mix i, with a payment in it.
	Step func(i, k int)
}

// Run drives the fixed mixes, then -faultmixes generated ones. In each,
// the pool comes to see the faulty endpoint's state and asks it again
// (detection goes on); StepsPerMix blocks are made, a generated mix
// changing the fault before each. Then:
//   - every block read through Src as the scanner does (a failed read
//     retried) equals the honest node's;
//   - a scanner over Src reaches the honest tip having applied each block
//     once, as the honest node has it (nothing missed, doubled or
//     different), and never rewound;
//   - a scanner over Alone applied only blocks equal to the honest
//     chain's (nothing taken the honest chain does not have), and every
//     block Alone serves equals it;
//   - the faulty endpoint got no more requests than its bucket allows.
func Run(ctx context.Context, t *testing.T, s Setup) {
	t.Helper()
	seed := *mixSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("fault mixes: %d fixed, %d generated of seed %d (again: -faultseed %d -faultmixes %d)", len(Mixes), *mixCount, seed, seed, *mixCount)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with the generated fault mixes of seed %d: go test -run '^%s$' -faultseed %d -faultmixes %d", seed, t.Name(), seed, *mixCount)
		}
	})
	start, err := s.Honest.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base, err := s.Honest.Block(ctx, start, Everything{})
	if err != nil {
		t.Fatal(err)
	}
	honestBlocks := map[chains.Height]chains.Block{}
	honest := func(h chains.Height) chains.Block {
		if b, ok := honestBlocks[h]; ok {
			return b
		}
		b, err := s.Honest.Block(ctx, h, Everything{})
		if err != nil {
			t.Fatalf("honest block %d: %v", h, err)
		}
		honestBlocks[h] = b
		return b
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	scanned := scan(sctx, s.Network, s.Src, start, base.Hash)
	alone := scan(sctx, s.Network, s.Alone, start, base.Hash)
	callsBefore, began := s.Faulty.Calls(), time.Now()
	set := func(f faultyproxy.Fault) {
		s.Faulty.Set(f)
		if s.FaultyAlone != nil {
			s.FaultyAlone.Set(f)
		}
	}
	next := start + 1
	for i, mix := range append(append([]Mix(nil), Mixes...), Generate(seed, *mixCount)...) {
		for k := 0; k < StepsPerMix; k++ {
			f := mix.Fault
			if mix.Over != nil {
				f = mix.Over[k]
			}
			set(f)
			if k == 0 || mix.Over != nil {
				waitState(ctx, t, s.Pool, "faulty", mix.State, s.Faulty.Calls)
			}
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
			if !SameBlock(got, honest(h)) {
				t.Fatalf("%s: block %d from the faulty endpoint alone differs from the honest chain", mix.Name, h)
			}
		}
		scanned.waitCursor(ctx, t, mix.Name, tip)
		scanned.check(t, mix.Name+": with an honest endpoint", honest, next, tip, true)
		alone.check(t, mix.Name+": the faulty endpoint alone", honest, start+1, tip, false)
		calls, secs := s.Faulty.Calls()-callsBefore, time.Since(began).Seconds()
		if s.Rate > 0 && float64(calls) > float64(s.Burst)+s.Rate*secs+1 {
			t.Fatalf("%s: the faulty endpoint got %d requests in %.1fs, over its bucket (%d + %.0f/s)", mix.Name, calls, secs, s.Burst, s.Rate)
		}
		st := s.Pool.Status()[0]
		t.Logf("%s: blocks %d..%d read and scanned; faulty endpoint asked %d times (%.1f/s), state %s, errors %d, throttles %d, head %d; alone scanned to %d",
			mix.Name, next, tip, calls, float64(calls)/secs, st.State, st.Errors, st.Throttles, st.Head, alone.cursor())
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
				if !SameBlock(got, want) {
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

// SameBlock reports whether two reads of a block are the same block: its
// ref, time and transfers (which endpoint served it may differ).
func SameBlock(got, want chains.Block) bool {
	got.Endpoint, want.Endpoint = "", ""
	return reflect.DeepEqual(got, want)
}
