package bitcoin

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// Issue 33 item 3, before a real btcd: behind a load balancer whose every
// other answer comes from a backend three blocks behind, getblockhash may
// come from the backend that has the block and getblock <hash> from the
// one that has not (-5, "Block not found"), or getblockhash from the stale
// one ("out of range" at a height the endpoint showed). The block is read
// by hash on the endpoint that named it, and an answer that it lacks a
// block it showed turns the endpoint away: the block is read from another
// at once, as the honest node has it. (Before, the read failed, and the
// next one split the same way.)
func TestBitcoinBlockFromAStaleBackendIsReadElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node, err := devnet.StartBtcd(ctx, t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	if _, err := node.Generate(ctx, 101); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Pay(ctx, node.FaucetScript(), 12345); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Generate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	honest := nodeClient(t, payment.Bitcoin, node.RPCURL)
	h, err := honest.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := honest.Block(ctx, h, endpointstest.Everything{})
	if err != nil {
		t.Fatal(err)
	}
	pool, lb := endpointstest.LoadBalancer(t, faultyproxy.Bitcoin, node.RPCURL, 3)
	c, err := New(Config{Network: payment.Bitcoin, Chain: Regtest, URL: "http://pool:pool@" + strings.TrimPrefix(endpoints.Placeholder, "http://"),
		HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	endpointstest.ShowHeads(ctx, t, pool, func(ctx context.Context) (int64, error) {
		n, err := c.Tip(ctx)
		return int64(n), err
	}, int64(h))
	endpointstest.ReadTwiceThroughLoadBalancer(ctx, t, c, pool, lb, h, want)
	// The header is read the same way.
	for i := 0; i < 2; i++ {
		ref, err := c.Header(ctx, h)
		if err != nil || ref != (chains.BlockRef{Height: h, Hash: want.Hash, Parent: want.Parent}) {
			t.Fatalf("header %d read %d through the load balancer: %+v %v", h, i+1, ref, err)
		}
	}
}
