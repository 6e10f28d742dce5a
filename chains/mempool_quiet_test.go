package chains_test

import (
	"context"
	"slices"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// pendingCalls counts the mempool reads handed to the sink, by size.
type pendingCalls struct {
	chains.ChainHandler
	sizes []int
}

func (p *pendingCalls) ApplyPending(ctx context.Context, n payment.Network, pending []chains.Transfer) error {
	p.sizes = append(p.sizes, len(pending))
	return p.ChainHandler.ApplyPending(ctx, n, pending)
}

// TestQuietMempoolCostsNoTransaction: an empty mempool read after an empty
// one the sink applied, with no mempool transfer handed to it since, is not
// handed to the sink (its transaction would record and orphan nothing);
// an empty read after a non-empty one still is, and orphans what vanished.
// Blocks applied in between do not make it needed again: only a mempool
// read records a pending transfer (issue 37 item 3).
func TestQuietMempoolCostsNoTransaction(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	sinks := e.Sink.ScannerSinks()
	calls := &pendingCalls{ChainHandler: sinks.Chain}
	sinks.Chain = calls
	nc := e.Config.Networks[payment.Bitcoin]
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Chain: nc.Chain, Parallel: nc.Parallel,
		SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight)}, f, sinks, &ingest.Keys{Store: e.Store}, e.Watch[payment.Bitcoin], nil)
	ctx := context.Background()
	scan := func(want ...int) {
		t.Helper()
		calls.sizes = nil
		for i := 0; ; i++ {
			caughtUp, err := sc.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if caughtUp {
				break
			}
			if i > 100 {
				t.Fatal("not caught up after 100 steps")
			}
		}
		if !slices.Equal(calls.sizes, want) {
			t.Fatalf("mempool reads applied %v, want %v", calls.sizes, want)
		}
	}
	scan(0) // the first read is applied: nothing is known of the mempool yet
	scan()
	scan()

	v := e.CreateIntent("order", "ORD-QUIET", "", "100.00", "BTC")
	tr := chains.Transfer{TxID: chainstest.TxID("quiet1"), Index: 0, Asset: payment.Native, Key: addressKey(t, e, v.ID),
		Address: v.Address, Amount: paywatchtest.Units(v.AmountBaseUnits)}
	f.Broadcast(tr)
	scan(1)
	if got := e.Intent(v.ID); got.Status != "detected" || got.Transfers[0].Status != "pending" {
		t.Fatalf("after broadcast: %s %+v", got.Status, got.Transfers)
	}
	f.Drop(tr.TxID)
	scan(0) // after a non-empty read: applied, and it orphans the vanished one
	if got := e.Intent(v.ID); got.Status != "awaiting_payment" || got.Transfers[0].Status != "orphaned" {
		t.Fatalf("after the mempool transaction vanished: %s %+v", got.Status, got.Transfers)
	}
	scan()

	// Mined from the mempool: the empty read after the block is applied
	// (the last one applied was not empty), then no more.
	f.Broadcast(tr)
	scan(1)
	f.Mine(1)
	scan(0)
	scan()
	f.Mine(1)
	scan()
	if got := e.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].Status == "pending" {
		t.Fatalf("after mining: %s %+v", got.Status, got.Transfers)
	}
	if n := count(t, e, "SELECT count(*) FROM transfers WHERE network = 'bitcoin' AND status = 'pending'"); n != 0 {
		t.Fatalf("%d pending transfers with an empty mempool", n)
	}
}
