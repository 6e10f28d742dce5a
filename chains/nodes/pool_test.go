package nodes_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/endpoints/endpointstest"
	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// poolConfig is network n with the given endpoints YAML (or rpc_url).
func poolConfig(t testing.TB, n payment.Network, chain, endpointsYAML string) *config.Config {
	t.Helper()
	y := fmt.Sprintf(`
database_url: postgres://u@127.0.0.1/pw
networks:
  %s:
    enabled: true
    chain: %s
    account_key: %q
    poll_interval: 50ms
    max_lag_blocks: 2
%s
`, n, chain, addresses.SandboxKeys[n], endpointsYAML)
	c, err := config.Parse(strings.NewReader(y), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// faultMixTest runs the fault mixes, fixed and generated (-faultmixes,
// -faultseed), on network n: a pool of a faulty preferred endpoint (before
// the node at honestURL, paced at faultyRate) and the honest node, and a
// pool of a faulty endpoint alone. step makes block k of mix i
// (with a payment in it). withCreds puts the node's user:password in an
// endpoint URL (Bitcoin).
func faultMixTest(t *testing.T, n payment.Network, chain string, kind faultyproxy.Kind, honestURL string, withCreds func(string) string, step func(i, k int)) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	faulty := faultyproxy.New(kind, honestURL)
	defer faulty.Close()
	faultyAlone := faultyproxy.New(kind, honestURL)
	defer faultyAlone.Close()
	honest, _, err := nodes.New(ctx, poolConfig(t, n, chain, fmt.Sprintf("    rpc_url: %q", honestURL)), n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := nodes.New(ctx, poolConfig(t, n, chain, fmt.Sprintf(`    endpoints:
      - {name: faulty, url: %q, priority: 0, max_requests_per_second: %d, burst: %d}
      - {name: honest, url: %q, priority: 1}`, withCreds(faulty.URL()), faultyRate, faultyBurst, honestURL)), n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, _, err := nodes.New(ctx, poolConfig(t, n, chain, fmt.Sprintf(`    endpoints:
      - {name: faulty, url: %q}`, withCreds(faultyAlone.URL()))), n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	endpointstest.Run(ctx, t, endpointstest.Setup{Network: n, Faulty: faulty, FaultyAlone: faultyAlone, Src: src, Alone: alone, Honest: honest, Pool: nodes.Pool(src),
		Rate: faultyRate, Burst: faultyBurst, Step: step})
}

// The faulty endpoint's token bucket in the fault mixes: low enough that
// pacing is one of the faults (the faulty endpoint is asked about 2 to 3 times a second).
const faultyRate, faultyBurst = 3, 3

// Issue 33 items 2, 3 and 7: a Tron network with a faulty preferred
// endpoint before the simulated node and an honest one keeps reading every
// block, each exactly as the honest node has it, through every fault; with
// only the faulty endpoint, no block read differs from the honest chain.
func TestTronPoolWithAFaultyEndpointMissesNothing(t *testing.T) {
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	node.Mine(5)
	payer := make([]byte, 20)
	faultMixTest(t, payment.Tron, "regtest", faultyproxy.Tron, srv.URL, func(u string) string { return u }, func(i, k int) {
		to := make([]byte, 20)
		to[0], to[1] = byte(i), byte(k)
		node.PayTRX(payer, to, int64(1000+i*10+k), true)
		node.Mine(1)
	})
}

// As TestTronPoolWithAFaultyEndpointMissesNothing, on the simulated Solana
// node (slots finalized at once).
func TestSolanaPoolWithAFaultyEndpointMissesNothing(t *testing.T) {
	node := solanafake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	var payer [32]byte
	payer[0] = 9
	node.Fund(payer, 1e12)
	node.Mine(5)
	faultMixTest(t, payment.Solana, "regtest", faultyproxy.Solana, srv.URL, func(u string) string { return u }, func(i, k int) {
		var to [32]byte
		to[0], to[1], to[2] = 1, byte(i), byte(k)
		node.PaySOL(payer, to, uint64(1e6+i*10+k), false, false)
		node.Mine(1)
	})
}

// As TestTronPoolWithAFaultyEndpointMissesNothing, before a real btcd.
func TestBitcoinPoolWithAFaultyEndpointMissesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, err := devnet.StartBtcd(ctx, t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop()
	if _, err := node.Generate(ctx, 101); err != nil {
		t.Fatal(err)
	}
	creds := func(u string) string { return strings.Replace(u, "http://", "http://u:p@", 1) }
	faultMixTest(t, payment.Bitcoin, "regtest", faultyproxy.Bitcoin, node.RPCURL, creds, func(i, k int) {
		if _, err := node.Pay(ctx, node.FaucetScript(), int64(10000+i*10+k)); err != nil {
			t.Fatal(err)
		}
		if _, err := node.Generate(ctx, 1); err != nil {
			t.Fatal(err)
		}
	})
}
