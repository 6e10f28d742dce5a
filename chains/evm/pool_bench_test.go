package evm_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// benchAnvil starts a real anvil for a benchmark.
func benchAnvil(b *testing.B) *ethdev.Anvil {
	b.Helper()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(b, "anvil", err)
	a, err := ethdev.StartAnvil(context.Background(), bin, b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Stop)
	return a
}

// BenchmarkEthereumCallsPerBlock counts the node requests of the steady
// state on a real anvil through a counting proxy (issue 33, measured): one
// tip poll and the block read, for blocks holding one ETH payment each,
// and for blocks holding one USDT (ERC-20) transfer each with the token
// configured, tracing as trace: auto finds it.
// The block is read by number, then its receipts, token logs and traces
// by hash in one batch request.
//
//	go test -run '^$' -bench EthereumCallsPerBlock -benchtime 50x ./chains/evm
func BenchmarkEthereumCallsPerBlock(b *testing.B) {
	ctx := context.Background()
	for _, withToken := range []bool{false, true} {
		b.Run(map[bool]string{false: "eth", true: "usdt"}[withToken], func(b *testing.B) {
			a := benchAnvil(b)
			var tokens []evm.Token
			var token common.Address
			if withToken {
				var err error
				if token, err = a.DeployToken(ctx, "Tether USD", "USDT"); err != nil {
					b.Fatal(err)
				}
				if err := a.Mint(ctx, token, ethdev.AnvilDevAccount, big.NewInt(1e15)); err != nil {
					b.Fatal(err)
				}
				tokens = []evm.Token{{Asset: payment.Asset("USDT"), Contract: token}}
			}
			counter := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
			defer counter.Close()
			c, err := evm.New(ctx, evm.Config{URL: counter.URL(), Tokens: tokens, Trace: evm.TraceAuto})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			before := counter.Calls()
			for i := 0; i < b.N; i++ {
				to := common.BigToAddress(big.NewInt(int64(0x3000 + i)))
				var err error
				if withToken {
					_, err = a.TransferToken(ctx, token, to, big.NewInt(1000))
				} else {
					_, err = a.SendETH(ctx, to, big.NewInt(1e9))
				}
				if err != nil {
					b.Fatal(err)
				}
				tip, err := c.Tip(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Block(ctx, tip, endpointstest.Everything{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(counter.Calls()-before)/float64(b.N), "calls/block")
		})
	}
}

// BenchmarkEthereumCallsPerIntent counts what an intent costs in node
// requests on a real anvil (issue 33, measured; the other chains' are
// BenchmarkCallsPerIntent in chains/nodes): creating b.N intents through
// the API (calls/create), and one new block scanned with them open against
// one scanned with none (calls/open_intent/block).
//
//	go test -run '^$' -bench EthereumCallsPerIntent -benchtime 20x ./chains/evm
func BenchmarkEthereumCallsPerIntent(b *testing.B) {
	ctx := context.Background()
	a := benchAnvil(b)
	counter := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
	defer counter.Close()
	c, err := evm.New(ctx, evm.Config{URL: counter.URL(), Trace: evm.TraceAuto})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	e := paywatchtest.New(b, paywatchtest.Only(payment.Ethereum), paywatchtest.WithSource(payment.Ethereum, c))
	mine := func() {
		if err := a.Mine(ctx, 1); err != nil {
			b.Fatal(err)
		}
		e.Sync(payment.Ethereum)
	}
	mine()
	before := counter.Calls()
	mine()
	idle := counter.Calls() - before
	b.ResetTimer()
	before = counter.Calls()
	for i := 0; i < b.N; i++ {
		e.CreateIntent("order", fmt.Sprintf("calls-%d", i), "", "10.00", "ETH")
	}
	created := counter.Calls() - before
	b.StopTimer()
	before = counter.Calls()
	mine()
	open := counter.Calls() - before
	b.ReportMetric(float64(created)/float64(b.N), "calls/create")
	b.ReportMetric(float64(open-idle)/float64(b.N), "calls/open_intent/block")
	b.ReportMetric(float64(idle), "calls/block_idle")
}

// BenchmarkEthereumDetectionWithThePreferredEndpointDown is
// chains/nodes' BenchmarkDetectionWithThePreferredEndpointDown on a real
// anvil: detection p95 through a pool of two endpoints (each behind a
// proxy, probed every 50ms) with both healthy, the preferred one answering
// 503, and the preferred one lagging 5 blocks (over the bound of 2), and
// the ratios to both healthy (issue 33, measured).
//
//	go test -run '^$' -bench EthereumDetection -benchtime 100x ./chains/evm
func BenchmarkEthereumDetectionWithThePreferredEndpointDown(b *testing.B) {
	ctx := context.Background()
	a := benchAnvil(b)
	if err := a.Mine(ctx, 10); err != nil {
		b.Fatal(err)
	}
	honest, err := evm.New(ctx, evm.Config{URL: a.RPCURL})
	if err != nil {
		b.Fatal(err)
	}
	defer honest.Close()
	i := 0
	mine := func() {
		i++
		if _, err := a.SendETH(ctx, common.BigToAddress(big.NewInt(int64(0x5000+i))), big.NewInt(1e9)); err != nil {
			b.Fatal(err)
		}
	}
	p95 := func(fault faultyproxy.Fault) time.Duration {
		preferred := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
		defer preferred.Close()
		other := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
		defer other.Close()
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		pool, err := endpoints.New([]endpoints.Spec{
			{Name: "preferred", URL: preferred.URL(), Scans: true},
			{Name: "other", URL: other.URL(), Scans: true, Priority: 1},
		}, endpoints.Options{Network: "ethereum", MaxLagBlocks: 2, LagGrace: 10 * time.Second, MaxBackoff: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		c, err := evm.New(pctx, evm.Config{URL: endpoints.Placeholder, HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: time.Minute}, Trace: evm.TraceAuto})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		go pool.Run(pctx, endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
			h, err := c.Tip(ctx)
			return int64(h), err
		}}, 50*time.Millisecond)
		preferred.Set(fault)
		tip, err := honest.Tip(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return endpointstest.DetectionP95(ctx, b, payment.Ethereum, c, tip, b.N, mine)
	}
	endpointstest.ReportDetection(b, p95(faultyproxy.Fault{}), p95(faultyproxy.Fault{Unavailable: true}), p95(faultyproxy.Fault{Lag: 5}))
}
