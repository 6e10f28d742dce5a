package bitcoin_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
)

// notifierFunc adapts a function to chains.Notifier.
type notifierFunc func(ctx context.Context, wake func()) error

func (f notifierFunc) Notify(ctx context.Context, wake func()) error { return f(ctx, wake) }

// TestBtcdWebsocketWakeFindsPaymentsAcrossLostConnections runs the scanner
// with a poll interval of an hour beside chains.KeepNotified on btcd's
// websocket: only a wake can make it see anything. A broadcast payment is
// detected from the mempool; then the websocket is dropped (the proxy in
// front of btcd closes every connection and refuses new ones for a while),
// KeepNotified resubscribes, and a second payment is still detected.
func TestBtcdWebsocketWakeFindsPaymentsAcrossLostConnections(t *testing.T) {
	node := startBtcd(t)
	proxy := startProxy(t, fmt.Sprintf("127.0.0.1:%d", node.node.RPCPort))
	src := newClient(t, payment.Bitcoin, proxy.URL(node.node.RPCURL), true)
	s := newScan(t, payment.Bitcoin, "BTC", 3, node, src)
	s.sync()

	ctx, cancel := context.WithCancel(context.Background())
	nc := s.e.Config.Networks[string(s.n)]
	steps := make(chan error, 1000)
	sc := chains.NewScanner(chains.ScannerConfig{Network: s.n, PollInterval: time.Hour, MaxBackoff: 200 * time.Millisecond,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, Observe: func(err error) { steps <- err }},
		s.src, s.e.Sink.ScannerSinks(), &ingest.Keys{Store: s.e.Store}, s.e.Watch[s.n], nil)
	// notes counts the node's notifications only, not KeepNotified's wake
	// after a loss.
	notes := make(chan struct{}, 1000)
	var subscriptions atomic.Int64
	attempts := make(chan struct{}, 1000) // one per Notify call
	n := notifierFunc(func(ctx context.Context, wake func()) error {
		subscriptions.Add(1)
		attempts <- struct{}{}
		return src.Notify(ctx, func() { notes <- struct{}{}; wake() })
	})
	done := make(chan error, 2)
	go func() { done <- sc.Run(ctx) }()
	go func() {
		done <- chains.KeepNotified(ctx, n, sc.Wake, chains.NotifyConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}, nil)
	}()
	defer func() {
		cancel()
		for i := 0; i < 2; i++ {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()
	if err := <-steps; err != nil { // the first step; then it waits an hour
		t.Fatal(err)
	}

	// subscribed mines until a notification arrives (the subscription is
	// up; notes left from an earlier one are dropped first) and waits for
	// the scanner, woken by it, to reach the tip.
	subscribed := func() {
		t.Helper()
		for len(notes) > 0 { // those of an earlier subscription
			<-notes
		}
		for tries, noted := 0, false; !noted; tries++ {
			if tries == 30 {
				t.Fatal("30 new blocks and no notification: not subscribed")
			}
			s.node.Mine(t, 1)
			select {
			case <-notes:
				noted = true
			case <-time.After(2 * time.Second):
			}
		}
		waitScanned(t, s, steps, func() bool { h, _ := s.cursor(); return h == s.node.Tip(t) })
		// The scanner records its health after the step: intents are
		// accepted once the recovered health is in.
		waitAvailable(t, s)
	}
	paidAndSeen := func(usd string) {
		t.Helper()
		v := s.order(usd)
		txid := s.pay(v.Address, units(t, v))
		waitScanned(t, s, steps, func() bool { return len(s.e.Intent(v.ID).Transfers) == 1 })
		if got := s.e.Intent(v.ID); got.Transfers[0].TxID != txid || got.Transfers[0].Status != "pending" {
			t.Fatalf("intent %s: %+v, want the broadcast %s pending", v.ID, got.Transfers, txid)
		}
	}

	subscribed()
	paidAndSeen("30.00")

	before := subscriptions.Load()
	proxy.Cut()
	for subscriptions.Load() < before+2 { // at least one failed attempt while cut
		select {
		case <-attempts:
		case <-time.After(30 * time.Second):
			t.Fatalf("no resubscription attempt after the cut (%d subscriptions)", subscriptions.Load())
		}
	}
	proxy.Restore(t)
	subscribed()
	paidAndSeen("31.00")
}

// waitScanned waits, step by step of the scanner, until ok; scanner errors
// are tolerated (the node may be cut), a minute without ok is not.
func waitScanned(t *testing.T, s *scan, steps <-chan error, ok func() bool) {
	t.Helper()
	timeout := time.After(time.Minute)
	for !ok() {
		select {
		case <-steps:
		case <-timeout:
			h, _ := s.cursor()
			t.Fatalf("not reached with the scanner woken only by notifications (cursor %d)", h)
		}
	}
}
