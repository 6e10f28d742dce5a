package endpointstest

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
)

// LoadBalancer is a pool of two endpoints before the node at backend: "lb"
// (preferred), a load balancer whose every other answer comes from a
// backend stale blocks behind, and "honest", the node itself. The lag
// bound is wide, so lb stays preferred however far its stale backend is
// behind: its heads that go back are ignored, and it shows the newest.
func LoadBalancer(t testing.TB, kind faultyproxy.Kind, backend string, stale int64) (*endpoints.Pool, *faultyproxy.Proxy) {
	t.Helper()
	lb := faultyproxy.New(kind, backend)
	t.Cleanup(lb.Close)
	lb.Set(faultyproxy.Fault{Stale: stale})
	pool, err := endpoints.New([]endpoints.Spec{
		{Name: "lb", URL: lb.URL(), Scans: true},
		{Name: "honest", URL: backend, Scans: true, Priority: 1},
	}, endpoints.Options{Network: string(kind), MaxLagBlocks: 1000, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return pool, lb
}

// ShowHeads probes pool's endpoints with head until each has shown a head
// of at least h.
func ShowHeads(ctx context.Context, t testing.TB, pool *endpoints.Pool, head func(context.Context) (int64, error), h int64) {
	t.Helper()
	for {
		pool.Probe(ctx, endpoints.Probes{Head: head}, false, 10*time.Second)
		low := h
		for _, s := range pool.Status() {
			low = min(low, s.Head)
		}
		if low >= h {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the endpoints never all showed height %d: %+v", h, pool.Status())
		}
	}
}

// ReadTwiceThroughLoadBalancer reads block h through src (sending through
// the LoadBalancer pool) twice in a row, so that one read's first request
// lands on lb's stale backend whatever came before, and checks each read
// succeeds and equals want: an answer of the stale backend for a block lb
// showed is turned away and the block read from the honest endpoint. It
// checks lb was asked and turned away.
func ReadTwiceThroughLoadBalancer(ctx context.Context, t *testing.T, src chains.Source, pool *endpoints.Pool, lb *faultyproxy.Proxy, h chains.Height, want chains.Block) {
	t.Helper()
	before, errsBefore := lb.Calls(), pool.Status()[0].Errors
	for i := 0; i < 2; i++ {
		got, err := src.Block(ctx, h, Everything{})
		if err != nil {
			t.Errorf("read %d of block %d through a load balancer with a stale backend: %v", i+1, h, err)
		} else if !SameBlock(got, want) {
			t.Errorf("read %d of block %d differs from the honest node's:\n got %+v\nwant %+v", i+1, h, got, want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if lb.Calls() == before {
		t.Fatal("the load balancer was never asked: the test proves nothing")
	}
	if st := pool.Status()[0]; st.Errors == errsBefore {
		t.Fatalf("no answer of the load balancer was turned away: %+v", st)
	}
}
