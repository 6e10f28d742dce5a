package nodes_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// everything watches every key, so a block read through the pool and one
// read directly compare in full.
type everything struct{}

func (everything) Contains([]byte) bool { return true }

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

// faultMixes are the faults the faulty endpoint shows in turn.
// state is what the pool must come to see of the faulty endpoint ("": not
// checked).
var faultMixes = []struct {
	name  string
	fault faultyproxy.Fault
	state endpoints.State
}{
	{"honest", faultyproxy.Fault{}, endpoints.Healthy},
	{"503", faultyproxy.Fault{Unavailable: true}, endpoints.Unreachable},
	{"429 with Retry-After", faultyproxy.Fault{Throttle: true, RetryAfter: 1}, endpoints.Throttled},
	{"drops connections", faultyproxy.Fault{Drop: true}, endpoints.Unreachable},
	{"lags 3 blocks", faultyproxy.Fault{Lag: 3}, ""},
	{"head backwards", faultyproxy.Fault{Backwards: 1}, ""},
	{"lags 3 blocks again", faultyproxy.Fault{Lag: 3}, ""},
	{"honest again", faultyproxy.Fault{}, endpoints.Healthy},
}

// waitState waits until the pool sees endpoint name in state want, and
// has asked it again (detection goes on).
func waitState(ctx context.Context, t *testing.T, src chains.Source, name string, want endpoints.State, asked func() int) {
	t.Helper()
	pool := nodes.Pool(src)
	if pool == nil {
		t.Fatal("no pool behind the source")
	}
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
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readAll reads blocks from..to through src as the scanner does (a failed
// read is retried, "not found" waited out) and checks each against the
// honest node's block: nothing missed, doubled or different.
func readAll(ctx context.Context, t *testing.T, src, honest chains.Source, from, to chains.Height) {
	t.Helper()
	for h := from; h <= to; h++ {
		want, err := honest.Block(ctx, h, everything{})
		if err != nil {
			t.Fatalf("honest block %d: %v", h, err)
		}
		for {
			got, err := src.Block(ctx, h, everything{})
			if err == nil {
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("block %d through the pool differs from the honest node's:\n got %+v\nwant %+v", h, got, want)
				}
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("block %d never read through the pool: %v", h, err)
			}
			select { // a failed read is retried, as the scanner's next step does
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
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
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// faultMixTest runs the fault mixes on network n: a pool of a faulty
// preferred endpoint (before the node at honestURL) and the honest node,
// and a pool of the faulty endpoint alone. step makes block k of mix i
// (with a payment in it). withCreds puts the node's user:password in an
// endpoint URL (Bitcoin).
func faultMixTest(t *testing.T, n payment.Network, chain string, kind faultyproxy.Kind, honestURL string, withCreds func(string) string, step func(i, k int)) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	faulty := faultyproxy.New(kind, honestURL)
	defer faulty.Close()
	honest, _, err := nodes.New(ctx, poolConfig(t, n, chain, fmt.Sprintf("    rpc_url: %q", honestURL)), n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := nodes.New(ctx, poolConfig(t, n, chain, fmt.Sprintf(`    endpoints:
      - {name: faulty, url: %q, priority: 0}
      - {name: honest, url: %q, priority: 1}`, withCreds(faulty.URL()), honestURL)), n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, _, err := nodes.New(ctx, poolConfig(t, n, chain, fmt.Sprintf(`    endpoints:
      - {name: faulty, url: %q}`, withCreds(faulty.URL()))), n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	next, err := honest.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, mix := range faultMixes {
		faulty.Set(mix.fault)
		waitState(ctx, t, src, "faulty", mix.state, faulty.Calls)
		for k := 0; k < 4; k++ {
			step(i, k)
		}
		tip, err := honest.Tip(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitTip(ctx, t, src, tip)
		readAll(ctx, t, src, honest, next, tip)
		// The faulty endpoint alone: whatever it answers, a block read is
		// the honest one or an error, never a different (empty) block.
		for h := next; h <= tip; h++ {
			got, err := alone.Block(ctx, h, everything{})
			if err != nil {
				continue
			}
			want, _ := honest.Block(ctx, h, everything{})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: block %d from the faulty endpoint alone differs from the honest chain", mix.name, h)
			}
		}
		st := nodes.Pool(src).Status()[0]
		t.Logf("%s: blocks %d..%d read; faulty endpoint asked %d times so far, state %s, errors %d, throttles %d", mix.name, next, tip, faulty.Calls(), st.State, st.Errors, st.Throttles)
		next = tip + 1
	}
}

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
