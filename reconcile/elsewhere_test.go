package reconcile_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/reconcile"
)

// Issue 33 item 5: behind a pool of endpoints, the reconciler reads the
// blocks it checks from another endpoint than the one serving the scanner
// (a second look, not the scanner's answers again), and from the
// scanner's own when no other can serve.
func TestReconcilerReadsElsewhereThanTheScanner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	to := bytes.Repeat([]byte{0x55}, 20)
	node.PayTRX(bytes.Repeat([]byte{7}, 20), to, 5_000_000, true)
	node.Mine(5)
	scan, other := faultyproxy.New(faultyproxy.Tron, srv.URL), faultyproxy.New(faultyproxy.Tron, srv.URL)
	defer scan.Close()
	defer other.Close()
	pool, err := endpoints.New([]endpoints.Spec{{Name: "scan", URL: scan.URL(), Scans: true}, {Name: "other", URL: other.URL(), Scans: true, Priority: 1}},
		endpoints.Options{Network: "tron", MaxLagBlocks: 2, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	src, err := tron.New(tron.Config{URL: endpoints.Placeholder, USDTContract: mainnetUSDT, HTTPClient: &http.Client{Transport: pool.Transport(true), Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	// Each endpoint's head is learnt by the pool's probe, as chains/nodes
	// runs it: the other endpoint serves a block only once it showed it.
	pctx, stopProbes := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		pool.Run(pctx, endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
			h, err := src.Tip(ctx)
			return int64(h), err
		}}, 20*time.Millisecond)
	}()
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	showed := func() bool {
		for _, st := range pool.Status() {
			if st.Name == "other" && st.Head >= int64(tip) {
				return true
			}
		}
		return false
	}
	for !showed() {
		select {
		case <-ctx.Done():
			t.Fatal("the other endpoint's head was never probed")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The probes stop, so every call counted below is a read.
	stopProbes()
	<-probed
	otherBefore := other.Calls()
	if _, err := src.Block(ctx, tip, chains.NewWatchSet(8)); err != nil {
		t.Fatal(err)
	}
	if other.Calls() != otherBefore {
		t.Fatalf("the scanner's reads went to the other endpoint (%d calls)", other.Calls()-otherBefore)
	}
	w := chains.NewWatchSet(8)
	w.Add(to)
	view := &reconcile.BlockView{Source: src, Watched: w}
	before := scan.Calls()
	credits, err := view.Credits(ctx, 1, tip, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(credits) != 1 || credits[0].Amount.Int64() != 5_000_000 {
		t.Fatalf("credits: %+v", credits)
	}
	if scan.Calls() != before || other.Calls() == otherBefore {
		t.Fatalf("the reconciler's reads: %d to the scanner's endpoint, %d to the other; want all to the other", scan.Calls()-before, other.Calls()-otherBefore)
	}
	// The other endpoint down: the scanner's serves the check.
	other.Set(faultyproxy.Fault{Unavailable: true})
	if _, err := view.Credits(ctx, 1, tip, nil); err != nil {
		t.Fatalf("with the other endpoint down: %v", err)
	}
	if scan.Calls() == before {
		t.Fatal("with the other endpoint down, the scanner's endpoint was not asked")
	}
}
