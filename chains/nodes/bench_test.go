package nodes_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// BenchmarkCallsPerBlock counts the node requests of the steady state per
// chain: one tip poll and the block read, for blocks holding one payment
// each (issue 33, measured). Through a pool of two endpoints the probes
// add one tip read per endpoint per poll interval, not per block.
// Ethereum's is BenchmarkEthereumCallsPerBlock in chains/evm (a test
// binary may not link anvil's helpers and btcd's).
//
//	go test -run '^$' -bench CallsPerBlock -benchtime 50x ./chains/nodes
func BenchmarkCallsPerBlock(b *testing.B) {
	ctx := context.Background()
	measure := func(b *testing.B, n payment.Network, kind faultyproxy.Kind, backend string, creds func(string) string, mine func()) {
		counter := faultyproxy.New(kind, backend)
		defer counter.Close()
		src, _, err := nodes.New(ctx, poolConfig(b, n, "regtest", fmt.Sprintf("    rpc_url: %q", creds(counter.URL()))), n, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		before := counter.Calls()
		for i := 0; i < b.N; i++ {
			mine()
			tip, err := src.Tip(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := src.Block(ctx, tip, endpointstest.Everything{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(counter.Calls()-before)/float64(b.N), "calls/block")
	}
	same := func(u string) string { return u }
	b.Run("tron", func(b *testing.B) {
		node := tronfake.New()
		srv := httptest.NewServer(node)
		defer srv.Close()
		payer := make([]byte, 20)
		i := 0
		measure(b, payment.Tron, faultyproxy.Tron, srv.URL, same, func() {
			i++
			to := make([]byte, 20)
			to[0], to[1] = byte(i>>8), byte(i)
			node.PayTRX(payer, to, 1000, true)
			node.Mine(1)
		})
	})
	b.Run("solana", func(b *testing.B) {
		node := solanafake.New()
		srv := httptest.NewServer(node)
		defer srv.Close()
		var payer [32]byte
		payer[0] = 9
		node.Fund(payer, 1e15)
		i := 0
		measure(b, payment.Solana, faultyproxy.Solana, srv.URL, same, func() {
			i++
			var to [32]byte
			to[0], to[1], to[2] = 1, byte(i>>8), byte(i)
			node.PaySOL(payer, to, 1e6, false, false)
			node.Mine(1)
		})
	})
	b.Run("bitcoin", func(b *testing.B) {
		bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		node, err := devnet.StartBtcd(bctx, b.TempDir(), 0)
		if err != nil {
			b.Skip("btcd:", err)
		}
		defer node.Stop()
		if _, err := node.Generate(bctx, 101); err != nil {
			b.Fatal(err)
		}
		creds := func(u string) string { return strings.Replace(u, "http://", "http://u:p@", 1) }
		measure(b, payment.Bitcoin, faultyproxy.Bitcoin, node.RPCURL, creds, func() {
			if _, err := node.Pay(bctx, node.FaucetScript(), 10000); err != nil {
				b.Fatal(err)
			}
			if _, err := node.Generate(bctx, 1); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkTronCatchUpWithinBudget reads b.N simulated Tron blocks (one
// TRX payment each) through a pool of one endpoint paced at 15 requests a
// second (TronGrid's free tier), four at a time as the scanner's
// parallel fetch does, and reports blocks per second and their ratio to
// the budget's 15 requests per second (issue 33, measured).
//
//	go test -run '^$' -bench TronCatchUp -benchtime 300x ./chains/nodes
func BenchmarkTronCatchUpWithinBudget(b *testing.B) {
	ctx := context.Background()
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	counter := faultyproxy.New(faultyproxy.Tron, srv.URL)
	defer counter.Close()
	payer := make([]byte, 20)
	for i := 0; i < b.N; i++ {
		to := make([]byte, 20)
		to[0], to[1] = byte(i>>8), byte(i)
		node.PayTRX(payer, to, 1000, true)
		node.Mine(1)
	}
	src, _, err := nodes.New(ctx, poolConfig(b, payment.Tron, "regtest", fmt.Sprintf(`    endpoints:
      - {name: trongrid, url: %q, max_requests_per_second: 15, burst: 15}`, counter.URL())), payment.Tron, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.Tip(ctx); err != nil {
		b.Fatal(err)
	}
	before := counter.Calls()
	b.ResetTimer()
	start := time.Now()
	next := make(chan int)
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			for h := range next {
				if _, err := src.Block(ctx, chains.Height(h), endpointstest.Everything{}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for h := 1; h <= b.N; h++ {
		next <- h
	}
	close(next)
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/secs, "blocks/s")
	b.ReportMetric(float64(counter.Calls()-before)/secs/15, "budget_used")
	b.ReportMetric(float64(counter.Calls()-before)/float64(b.N), "calls/block")
}

// BenchmarkCallsPerIntent counts what an intent costs in node requests
// (issue 33, measured), per chain, through a counting proxy before the
// node: creating b.N intents through the API (calls/create: creating one
// asks no node anything), and one new block scanned with the b.N intents
// open against one scanned with none (calls/open_intent/block: nothing for
// chains read block by block; Solana's address mode lists each watched
// address's signatures once per catch-up).
//
//	go test -run '^$' -bench CallsPerIntent -benchtime 20x ./chains/nodes
func BenchmarkCallsPerIntent(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, n payment.Network, method string, kind faultyproxy.Kind, backend string, creds func(string) string, mine func(), opts ...paywatchtest.Option) {
		counter := faultyproxy.New(kind, backend)
		defer counter.Close()
		src, _, err := nodes.New(ctx, poolConfig(b, n, "regtest", fmt.Sprintf("    rpc_url: %q", creds(counter.URL()))), n, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		e := paywatchtest.New(b, append([]paywatchtest.Option{paywatchtest.Only(n), paywatchtest.WithSource(n, src)}, opts...)...)
		if n == payment.Solana {
			// A pool address per intent.
			keys := make([]string, b.N)
			for i := range keys {
				var k [32]byte
				binary.BigEndian.PutUint64(k[:], uint64(i+1))
				k[31] = 0x5a
				keys[i] = base58.Encode(k[:])
			}
			e.ImportSolanaPool(keys...)
		}
		mine()
		e.Sync(n)
		before := counter.Calls()
		mine()
		e.Sync(n)
		idle := counter.Calls() - before
		b.ResetTimer()
		before = counter.Calls()
		for i := 0; i < b.N; i++ {
			e.CreateIntent("order", fmt.Sprintf("calls-%d", i), "", "10.00", method)
		}
		created := counter.Calls() - before
		b.StopTimer()
		before = counter.Calls()
		mine()
		e.Sync(n)
		open := counter.Calls() - before
		b.ReportMetric(float64(created)/float64(b.N), "calls/create")
		b.ReportMetric(float64(open-idle)/float64(b.N), "calls/open_intent/block")
		b.ReportMetric(float64(idle), "calls/block_idle")
	}
	same := func(u string) string { return u }
	b.Run("tron", func(b *testing.B) {
		node := tronfake.New()
		srv := httptest.NewServer(node)
		defer srv.Close()
		node.Mine(5)
		run(b, payment.Tron, "TRX", faultyproxy.Tron, srv.URL, same, func() { node.Mine(1) })
	})
	b.Run("solana", func(b *testing.B) {
		node := solanafake.New()
		if err := node.MineAt(time.Date(2026, 11, 30, 13, 59, 50, 0, time.UTC)); err != nil { // paywatchtest's clock, less 10s
			b.Fatal(err)
		}
		srv := httptest.NewServer(node)
		defer srv.Close()
		node.Mine(5)
		run(b, payment.Solana, "SOL", faultyproxy.Solana, srv.URL, same, func() { node.Mine(1) })
	})
	b.Run("bitcoin", func(b *testing.B) {
		node, err := devnet.StartBtcd(ctx, b.TempDir(), 0)
		if errors.Is(err, devnet.ErrMissing) {
			devnettest.Need(b, "btcd", err)
		}
		if err != nil {
			b.Fatal(err)
		}
		defer node.Stop()
		creds := func(u string) string { return strings.Replace(u, "http://", "http://u:p@", 1) }
		run(b, payment.Bitcoin, "BTC", faultyproxy.Bitcoin, node.RPCURL, creds, func() {
			if _, err := node.Generate(ctx, 1); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkDetectionWithThePreferredEndpointDown measures detection
// latency (a block with a payment mined, to a scanner polling every 50ms
// applying it) through a pool of two endpoints before the same node, each
// behind a proxy: both healthy, the preferred one answering 503, and the
// preferred one lagging 5 blocks (over the lag bound of 2). It reports
// each p95 and the ratios to both healthy (issue 33, measured).
// Ethereum's is in chains/evm.
//
//	go test -run '^$' -bench DetectionWithThePreferred -benchtime 100x ./chains/nodes
func BenchmarkDetectionWithThePreferredEndpointDown(b *testing.B) {
	ctx := context.Background()
	measure := func(b *testing.B, n payment.Network, kind faultyproxy.Kind, backend string, tip func() chains.Height, mine func()) {
		p95 := func(fault faultyproxy.Fault) time.Duration {
			preferred := faultyproxy.New(kind, backend)
			defer preferred.Close()
			other := faultyproxy.New(kind, backend)
			defer other.Close()
			sctx, stop := context.WithCancel(ctx)
			defer stop()
			src, _, err := nodes.New(sctx, poolConfig(b, n, "regtest", fmt.Sprintf(`    endpoints:
      - {name: preferred, url: %q, priority: 0}
      - {name: other, url: %q, priority: 1}`, preferred.URL(), other.URL())), n, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			preferred.Set(fault)
			return endpointstest.DetectionP95(ctx, b, n, src, tip(), b.N, mine)
		}
		endpointstest.ReportDetection(b, p95(faultyproxy.Fault{}), p95(faultyproxy.Fault{Unavailable: true}), p95(faultyproxy.Fault{Lag: 5}))
	}
	b.Run("tron", func(b *testing.B) {
		node := tronfake.New()
		srv := httptest.NewServer(node)
		defer srv.Close()
		node.Mine(10)
		payer := make([]byte, 20)
		i := 0
		measure(b, payment.Tron, faultyproxy.Tron, srv.URL, func() chains.Height { return chains.Height(node.Tip()) }, func() {
			i++
			to := make([]byte, 20)
			to[0], to[1] = byte(i>>8), byte(i)
			node.PayTRX(payer, to, 1000, true)
			node.Mine(1)
		})
	})
	b.Run("solana", func(b *testing.B) {
		node := solanafake.New()
		srv := httptest.NewServer(node)
		defer srv.Close()
		var payer [32]byte
		payer[0] = 9
		node.Fund(payer, 1e15)
		node.Mine(10)
		i := 0
		measure(b, payment.Solana, faultyproxy.Solana, srv.URL, func() chains.Height { return chains.Height(node.Tip()) }, func() {
			i++
			var to [32]byte
			to[0], to[1], to[2] = 2, byte(i>>8), byte(i)
			node.PaySOL(payer, to, 1e6, false, false)
			node.Mine(1)
		})
	})
}
