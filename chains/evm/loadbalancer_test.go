package evm_test

import (
	"context"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
)

// Issue 33 item 3, before a real anvil: behind a load balancer whose every
// other answer comes from a backend three blocks behind, the block may
// come from the backend that has it and its receipts and traces (read by
// blockHash) from the one that has not (null, "block not found"), or the
// block by number from the stale one (null at a height the endpoint
// showed). Either answer turns the endpoint away and the block is read
// from another at once, as the honest node has it. (Before, the read
// failed, and the next one split the same way.)
func TestEthereumBlockFromAStaleBackendIsReadElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	for i := 0; i < 4; i++ {
		if _, err := a.SendETH(ctx, common.BigToAddress(big.NewInt(int64(0x2000+i))), big.NewInt(int64(1e9+i))); err != nil {
			t.Fatal(err)
		}
	}
	honest, err := evm.New(ctx, evm.Config{URL: a.RPCURL, Trace: evm.TraceAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer honest.Close()
	h, err := honest.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := honest.Block(ctx, h, endpointstest.Everything{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Transfers) != 1 {
		t.Fatalf("the honest block holds %d transfers, want the payment", len(want.Transfers))
	}
	pool, lb := endpointstest.LoadBalancer(t, faultyproxy.EVM, a.RPCURL, 3)
	c, err := evm.New(ctx, evm.Config{URL: endpoints.Placeholder, HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: time.Minute}, Trace: evm.TraceAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	endpointstest.ShowHeads(ctx, t, pool, func(ctx context.Context) (int64, error) {
		n, err := c.Tip(ctx)
		return int64(n), err
	}, int64(h))
	endpointstest.ReadTwiceThroughLoadBalancer(ctx, t, c, pool, lb, h, want)
	for i := 0; i < 2; i++ {
		ref, err := c.Header(ctx, h)
		if err != nil || ref != (chains.BlockRef{Height: h, Hash: want.Hash, Parent: want.Parent}) {
			t.Fatalf("header %d read %d through the load balancer: %+v %v", h, i+1, ref, err)
		}
	}
}
