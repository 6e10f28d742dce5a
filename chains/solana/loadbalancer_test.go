package solana_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
)

// solanaLBNode is a simulated node with a payment to `to` in its newest
// slot.
func solanaLBNode(t *testing.T) (*solanafake.Node, *httptest.Server, [32]byte) {
	t.Helper()
	node := solanafake.New()
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	var payer, to [32]byte
	payer[0], to[0], to[1] = 9, 1, 77
	node.Fund(payer, 1e12)
	node.Mine(5)
	node.PaySOL(payer, to, 1_234_567, false, false)
	node.Mine(1)
	return node, srv, to
}

// pooledSolana is a client sending through pool.
func pooledSolana(t *testing.T, pool *endpoints.Pool, mode string) *solana.Client {
	t.Helper()
	c, err := solana.New(solana.Config{URL: endpoints.Placeholder, Mode: mode, HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 33 item 3: behind a load balancer whose every other answer comes
// from a backend three slots behind, getBlock for a slot the endpoint
// showed finalized may be answered "not available" (-32004) by the stale
// backend. That answer turns the endpoint away and the block is read from
// another at once, as the honest node has it. (Before, the read failed.)
func TestSolanaBlockFromAStaleBackendIsReadElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node, srv, _ := solanaLBNode(t)
	honest, err := solana.New(solana.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := chains.Height(node.Tip())
	want, err := honest.Block(ctx, h, endpointstest.Everything{})
	if err != nil {
		t.Fatal(err)
	}
	pool, lb := endpointstest.LoadBalancer(t, faultyproxy.Solana, srv.URL, 3)
	c := pooledSolana(t, pool, solana.ModeBlock)
	endpointstest.ShowHeads(ctx, t, pool, func(ctx context.Context) (int64, error) {
		n, err := c.Tip(ctx)
		return int64(n), err
	}, int64(h))
	endpointstest.ReadTwiceThroughLoadBalancer(ctx, t, c, pool, lb, h, want)
	for i := 0; i < 2; i++ {
		ref, err := c.Header(ctx, h)
		if err != nil || ref != want.BlockRef {
			t.Fatalf("header %d read %d through the load balancer: %+v %v", h, i+1, ref, err)
		}
	}
}

// Issue 33 item 3: in address mode, the signature lists ask the node to
// have reached the scanned slot (minContextSlot). Behind a pool, the
// preferred endpoint lags two slots (within the lag bound) and answers
// -32016 to such a list; the address-mode read goes to an endpoint that
// showed the slot finalized, so the payment is found at once and the
// blocks are the honest node's. (Before, the read went to the lagging
// endpoint and failed until it caught up.)
func TestSolanaAddressModeReadsGoToAnEndpointAtTheSlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node, srv, to := solanaLBNode(t)
	honestClient, err := solana.New(solana.Config{URL: srv.URL, Mode: solana.ModeAddress})
	if err != nil {
		t.Fatal(err)
	}
	tip := chains.Height(node.Tip())
	w := chains.NewWatchSet(1)
	w.Add(to[:])
	want, err := solana.NewModeSource(honestClient).SparseBlocks(ctx, tip-3, tip, "cursor", w)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || len(want[0].Transfers) != 1 {
		t.Fatalf("the honest node's address-mode read: %+v", want)
	}
	lag := faultyproxy.New(faultyproxy.Solana, srv.URL)
	defer lag.Close()
	lag.Set(faultyproxy.Fault{Lag: 2})
	pool, err := endpoints.New([]endpoints.Spec{
		{Name: "lagging", URL: lag.URL(), Scans: true},
		{Name: "honest", URL: srv.URL, Scans: true, Priority: 1},
	}, endpoints.Options{Network: "solana", MaxLagBlocks: 2})
	if err != nil {
		t.Fatal(err)
	}
	src := solana.NewModeSource(pooledSolana(t, pool, solana.ModeAddress))
	endpointstest.ShowHeads(ctx, t, pool, func(ctx context.Context) (int64, error) {
		n, err := src.Client.Tip(ctx)
		return int64(n), err
	}, int64(tip-2))
	if st := pool.Status(); st[0].State != endpoints.Healthy || st[1].Head != int64(tip) {
		t.Fatalf("want the lagging endpoint healthy (within the bound) and the honest one at %d: %+v", tip, st)
	}
	before := lag.Calls()
	got, err := src.SparseBlocks(ctx, tip-3, tip, "cursor", w)
	if err != nil {
		t.Fatalf("address-mode read through the pool: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("address-mode read through the pool:\n got %+v\nwant %+v", got, want)
	}
	// The lagging endpoint is still the one asked where a read needs no
	// slot it has not shown.
	if _, err := src.Client.Block(ctx, tip-2, endpointstest.Everything{}); err != nil || lag.Calls() == before {
		t.Fatalf("a read of slot %d did not go to the preferred endpoint: %v", tip-2, err)
	}
}
