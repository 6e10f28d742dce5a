package tron_test

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
)

// Issue 33 item 3: behind a load balancer whose every other answer comes
// from a backend three blocks behind, a block's transaction infos may come
// from the backend that has not seen the block ([]) while the block came
// from the one that has. The infos are checked against the block the same
// endpoint served; an info set that is not the block's own turns that
// endpoint away and both are read from another, so the USDT payment is
// read as the honest node has it, at once. (Before, the client asked the
// same endpoint again, block from one backend and infos from the other
// every time, and gave up.)
func TestTronInfosFromAStaleBackendAreReadElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	usdt, err := tron.ParseAddress(mainnetUSDT)
	if err != nil {
		t.Fatal(err)
	}
	node.Mine(5)
	node.PayTRC20(usdt, newAccount(), newAccount(), big.NewInt(5_000_000), true)
	node.Mine(1)
	h := chains.Height(node.Tip())
	honest, err := tron.New(tron.Config{URL: srv.URL, USDTContract: mainnetUSDT})
	if err != nil {
		t.Fatal(err)
	}
	want, err := honest.Block(ctx, h, endpointstest.Everything{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Transfers) != 1 {
		t.Fatalf("the honest block holds %d transfers, want the USDT payment", len(want.Transfers))
	}
	pool, lb := endpointstest.LoadBalancer(t, faultyproxy.Tron, srv.URL, 3)
	c, err := tron.New(tron.Config{URL: endpoints.Placeholder, USDTContract: mainnetUSDT,
		HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	endpointstest.ShowHeads(ctx, t, pool, func(ctx context.Context) (int64, error) {
		n, err := c.Tip(ctx)
		return int64(n), err
	}, int64(h))
	endpointstest.ReadTwiceThroughLoadBalancer(ctx, t, c, pool, lb, h, want)
	// The batch read of the catch-up too: {} from the stale backend for
	// a range the endpoint showed is asked of the honest endpoint.
	wantRange, err := honest.Blocks(ctx, h-1, h+1, endpointstest.Everything{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if i == 1 {
			// One call in between: the batch's first request lands on
			// the other backend than the first time.
			if _, err := c.Tip(ctx); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.Blocks(ctx, h-1, h+1, endpointstest.Everything{})
		same := err == nil && len(got) == len(wantRange)
		for i := 0; same && i < len(got); i++ {
			same = endpointstest.SameBlock(got[i], wantRange[i])
		}
		if !same {
			t.Errorf("blocks %d..%d read %d through the load balancer: %v\n got %+v\nwant %+v", h-1, h, i+1, err, got, wantRange)
		}
	}
}
