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
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// everything watches every key, so a block read through the pool and one
// read directly compare in full.
type everything struct{}

func (everything) Contains([]byte) bool { return true }

// poolConfig is network n with the given endpoints YAML (or rpc_url).
func poolConfig(t *testing.T, n payment.Network, chain, endpointsYAML string) *config.Config {
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

// Issue 33 items 2, 3 and 7: a Tron network with a faulty preferred
// endpoint before the simulated node and an honest one keeps reading every
// block, each exactly as the honest node has it, through every fault; with
// only the faulty endpoint, no block read differs from the honest chain.
func TestTronPoolWithAFaultyEndpointMissesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	faulty := faultyproxy.New(faultyproxy.Tron, srv.URL)
	defer faulty.Close()
	node.Mine(5)

	honest, _, err := nodes.New(ctx, poolConfig(t, payment.Tron, "regtest", "    rpc_url: "+srv.URL), payment.Tron, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := nodes.New(ctx, poolConfig(t, payment.Tron, "regtest", fmt.Sprintf(`    endpoints:
      - {name: faulty, url: %q, priority: 0}
      - {name: honest, url: %q, priority: 1}`, faulty.URL(), srv.URL)), payment.Tron, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, _, err := nodes.New(ctx, poolConfig(t, payment.Tron, "regtest", fmt.Sprintf(`    endpoints:
      - {name: faulty, url: %q}`, faulty.URL())), payment.Tron, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	payer := make([]byte, 20)
	next := chains.Height(1)
	for i, mix := range faultMixes {
		faulty.Set(mix.fault)
		waitState(ctx, t, src, "faulty", mix.state, faulty.Calls)
		for k := 0; k < 4; k++ {
			to := make([]byte, 20)
			to[0], to[1] = byte(i), byte(k)
			node.PayTRX(payer, to, int64(1000+i*10+k), true)
			node.Mine(1)
		}
		tip := chains.Height(node.Tip())
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
		t.Logf("%s: blocks %d..%d read, faulty endpoint asked %d times so far: %+v", mix.name, next, tip, faulty.Calls(), nodes.Pool(src).Status())
		next = tip + 1
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("timed out")
	}
}
