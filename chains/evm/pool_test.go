package evm_test

import (
	"context"
	"errors"
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
	"github.com/paywatch/paywatch/payment"
)

// pooled is an evm client reading through a pool of specs, probed every
// 50ms as chains/nodes probes it.
func pooled(ctx context.Context, t *testing.T, specs ...endpoints.Spec) (*evm.Client, *endpoints.Pool) {
	t.Helper()
	pool, err := endpoints.New(specs, endpoints.Options{Network: "ethereum", MaxLagBlocks: 2, LagGrace: 10 * time.Second, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := evm.New(ctx, evm.Config{URL: endpoints.Placeholder, HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: time.Minute}, Trace: evm.TraceAuto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	go pool.Run(ctx, endpoints.Probes{
		Head: func(ctx context.Context) (int64, error) {
			h, err := c.Tip(ctx)
			return int64(h), err
		},
		Chain: func(ctx context.Context) (string, error) {
			if err := c.VerifyChain(ctx, "regtest"); errors.Is(err, chains.ErrWrongChain) {
				return "another chain", nil
			} else if err != nil {
				return "", err
			}
			return "", nil
		},
	}, 50*time.Millisecond)
	return c, pool
}

// Issue 33 items 2, 3 and 7, before a real anvil: with a faulty preferred
// endpoint and an honest one every block (its receipts and traces too) is
// read as the honest node has it, through every fault; the faulty
// endpoint alone never serves a different block.
func TestEthereumPoolWithAFaultyEndpointMissesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	faulty := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
	defer faulty.Close()
	faultyAlone := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
	defer faultyAlone.Close()
	honest, err := evm.New(ctx, evm.Config{URL: a.RPCURL, Trace: evm.TraceAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer honest.Close()
	const rate, burst = 3, 3
	src, pool := pooled(ctx, t, endpoints.Spec{Name: "faulty", URL: faulty.URL(), Scans: true, RatePerSecond: rate, Burst: burst},
		endpoints.Spec{Name: "honest", URL: a.RPCURL, Scans: true, Priority: 1})
	alone, _ := pooled(ctx, t, endpoints.Spec{Name: "faulty", URL: faultyAlone.URL(), Scans: true})
	endpointstest.Run(ctx, t, endpointstest.Setup{Network: payment.Ethereum, Faulty: faulty, FaultyAlone: faultyAlone, Src: src, Alone: alone, Honest: honest, Pool: pool,
		Rate: rate, Burst: burst, Step: func(i, k int) {
			to := common.BigToAddress(big.NewInt(int64(0x1000 + i*16 + k)))
			if _, err := a.SendETH(ctx, to, big.NewInt(int64(1e9+i*10+k))); err != nil {
				t.Fatal(err)
			}
		}})
}
