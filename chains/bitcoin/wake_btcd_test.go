package bitcoin_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
)

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

	nc := s.e.Config.Networks[s.n]
	w := chainstest.RunWoken(t, chains.ScannerConfig{Network: s.n, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		s.src, src, s.e.Sink.ScannerSinks(), &ingest.Keys{Store: s.e.Store}, s.e.Watch[s.n])
	steps, notes, attempts := w.Steps, w.Notes, w.Attempts

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

	before := w.Subscriptions()
	proxy.Cut()
	for w.Subscriptions() < before+2 { // at least one failed attempt while cut
		select {
		case <-attempts:
		case <-time.After(30 * time.Second):
			t.Fatalf("no resubscription attempt after the cut (%d subscriptions)", w.Subscriptions())
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
