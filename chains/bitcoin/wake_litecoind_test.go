package bitcoin_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
)

// TestLitecoindWakeFindsPaymentsAcrossRestart runs the scanner with a poll
// interval of an hour beside chains.KeepNotified on real litecoind (no
// ZMQ): only a wake can make it see anything. A broadcast payment is
// detected from the mempool (the getmempoolinfo peek) and its block is
// seen (the waitfornewblock long-poll); then litecoind is stopped and
// started again on the same data directory and port, KeepNotified
// resubscribes, and a second payment is detected and confirmed the same
// way.
func TestLitecoindWakeFindsPaymentsAcrossRestart(t *testing.T) {
	node := startLitecoind(t, false)
	src := newClient(t, payment.Litecoin, node.node.RPCURL, false)
	s := newScan(t, payment.Litecoin, "LTC", 3, node, src)
	s.sync()

	nc := s.e.Config.Networks[s.n]
	w := chainstest.RunWoken(t, chains.ScannerConfig{Network: s.n, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		s.src, src, s.e.Sink.ScannerSinks(), &ingest.Keys{Store: s.e.Store}, s.e.Watch[s.n])
	steps, notes, attempts := w.Steps, w.Notes, w.Attempts

	subscribed := func() {
		t.Helper()
		for len(notes) > 0 {
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
	paidSeenAndMined := func(usd string) {
		t.Helper()
		v := s.order(usd)
		for len(notes) > 0 {
			<-notes
		}
		txid := s.pay(v.Address, units(t, v))
		waitScanned(t, s, steps, func() bool { return len(s.e.Intent(v.ID).Transfers) == 1 })
		// No block was mined: only the mempool peek notifies (a lost
		// long-poll also wakes the scanner, but is no notification).
		if len(notes) == 0 {
			t.Fatalf("the broadcast %s was found without a mempool notification", txid)
		}
		if got := s.e.Intent(v.ID); got.Transfers[0].TxID != txid || got.Transfers[0].Status != "pending" {
			t.Fatalf("intent %s: %+v, want the broadcast %s pending", v.ID, got.Transfers, txid)
		}
		s.node.Mine(t, 1)
		waitScanned(t, s, steps, func() bool { return s.e.Intent(v.ID).Transfers[0].Confirmations == 1 })
	}

	subscribed()
	paidSeenAndMined("30.00")

	before := w.Subscriptions()
	node.Stop()
	for w.Subscriptions() < before+2 { // at least one failed attempt while the node is down
		select {
		case <-attempts:
		case <-time.After(60 * time.Second):
			t.Fatalf("no resubscription attempt while litecoind was down (%d subscriptions)", w.Subscriptions())
		}
	}
	node.Start(t)
	subscribed()
	paidSeenAndMined("31.00")
}

// waitAvailable waits until the network accepts intents again (the
// scanner's healthy step is recorded).
func waitAvailable(t *testing.T, s *scan) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(time.Minute)
	for {
		err := s.e.Nets.Available(context.Background(), s.n)
		if err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("%s not available a minute after catching up: %v", s.n, err)
		}
	}
}
