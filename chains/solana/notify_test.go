package solana_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
)

// TestNotifyWakesOnSlotsAndResubscribes runs the scanner with a poll
// interval of an hour beside chains.KeepNotified on the fake's slotSubscribe:
// only a wake can make it see a new slot. A payment is found; then the node
// drops every websocket, KeepNotified subscribes again and a second payment
// is found too.
func TestNotifyWakesOnSlotsAndResubscribes(t *testing.T) {
	s := newSolScan(t, solana.ModeBlock)
	s.sync()
	nc := s.Config.Networks[payment.Solana]
	w := chainstest.RunWoken(t, chains.ScannerConfig{Network: payment.Solana, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		s.src, s.src, s.Sink.ScannerSinks(), &ingest.Keys{Store: s.Store}, s.Watch[payment.Solana])
	steps, notes, attempts := w.Steps, w.Notes, w.Attempts
	waitScanned := func(what string, ok func() bool) {
		t.Helper()
		timeout := time.After(time.Minute)
		for !ok() {
			select {
			case <-steps:
			case <-timeout:
				t.Fatalf("%s: not reached with the scanner woken only by notifications (cursor %d, tip %d)", what, s.cursor().Height, s.node.Tip())
			}
		}
	}
	// subscribed produces slots until a notification arrives (after
	// dropping those of an earlier subscription).
	subscribed := func() {
		t.Helper()
		for len(notes) > 0 {
			<-notes
		}
		for tries, noted := 0, false; !noted; tries++ {
			if tries == 30 {
				t.Fatal("30 new blocks and no notification: not subscribed")
			}
			s.mine(1)
			select {
			case <-notes:
				noted = true
			case <-time.After(2 * time.Second):
			}
		}
		waitScanned("caught up", func() bool { return uint64(s.cursor().Height) == s.node.Tip() })
	}
	paidAndSeen := func(ref, usd string) {
		t.Helper()
		v := s.CreateIntent("order", ref, "", usd, "SOL")
		sig := s.pay(v, lamports(v))
		s.mine(1)
		waitScanned(ref, func() bool { return s.Intent(v.ID).Status == "paid" })
		if got := s.Intent(v.ID); len(got.Transfers) != 1 || got.Transfers[0].TxID != sig {
			t.Fatalf("%s: %+v, want the payment %s", ref, got.Transfers, sig)
		}
	}

	subscribed()
	paidAndSeen("SOL-WAKE-1", "10.00")
	before := w.Subscriptions()
	s.node.DropSubscriptions()
	for w.Subscriptions() <= before { // the old Notify has returned
		select {
		case <-attempts:
		case <-time.After(30 * time.Second):
			t.Fatalf("not resubscribed after the drop (%d subscriptions)", w.Subscriptions())
		}
	}
	subscribed()
	paidAndSeen("SOL-WAKE-2", "11.00")
}

// TestNotifyWithoutPubsubIsUnsupported: an HTTP-only endpoint refusing the
// websocket upgrade (404) is ErrNotifyUnsupported, so KeepNotified stops and
// the scanner polls.
func TestNotifyWithoutPubsubIsUnsupported(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	c, err := solana.New(solana.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Notify(context.Background(), func() { t.Error("woken") })
	if !errors.Is(err, chains.ErrNotifyUnsupported) {
		t.Fatalf("Notify = %v, want ErrNotifyUnsupported", err)
	}
}
