package evm_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
)

// TestAnvilWakeFindsPaymentsAcrossRestart runs the scanner with a poll
// interval of an hour beside chains.KeepNotified on anvil's eth_subscribe:
// only a wake can make it see anything. An ETH payment (mined at once by
// anvil) is recorded; then anvil is stopped and started again on the same
// port and state, KeepNotified resubscribes, and a second payment is still
// recorded: the lost subscription skipped nothing.
func TestAnvilWakeFindsPaymentsAcrossRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	n := startScanNode(t, "--state", state)
	s := newScan(t, n, "off", func(c *config.Config) {
		three := 3
		c.Methods[payment.ETH].Confirmations = &three
	})
	s.sync()

	nc := s.Config.Networks[payment.Ethereum]
	w := chainstest.RunWoken(t, chains.ScannerConfig{Network: payment.Ethereum, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		s.src, s.src, s.Sink.ScannerSinks(), &ingest.Keys{Store: s.Store}, s.Watch[payment.Ethereum])
	steps, notes, attempts := w.Steps, w.Notes, w.Attempts
	// until waits, step by step of the scanner, until ok.
	until := func(what string, ok func() bool) {
		t.Helper()
		timeout := time.After(time.Minute)
		for !ok() {
			select {
			case <-steps:
			case <-timeout:
				t.Fatalf("%s: not reached with the scanner woken only by notifications", what)
			}
		}
	}
	tip := func() int64 {
		h, err := s.n.Eth.BlockNumber(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return int64(h)
	}
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
		until("the tip", func() bool {
			c, err := s.Store.GetCursor(context.Background(), string(payment.Ethereum))
			return err == nil && c.Height == tip()
		})
		// The scanner records its health after the step.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		timeout := time.After(time.Minute)
		for {
			err := s.Nets.Available(context.Background(), payment.Ethereum)
			if err == nil {
				break
			}
			select {
			case <-tick.C:
			case <-timeout:
				t.Fatalf("ethereum not available a minute after catching up: %v", err)
			}
		}
	}
	paidAndSeen := func(usd string) {
		t.Helper()
		v := s.intent(payment.ETH, usd)
		r := s.payETH(v, amountOf(t, v))
		until("the payment "+r.TxHash.Hex(), func() bool { return len(s.Intent(v.ID).Transfers) == 1 })
		if got := s.Intent(v.ID).Transfers[0]; got.TxID != r.TxHash.Hex() || got.Confirmations != 1 {
			t.Fatalf("intent %s: %+v, want %s with 1 confirmation", v.ID, got, r.TxHash.Hex())
		}
	}

	subscribed()
	paidAndSeen("30.00")

	bin, err := ethdev.FindAnvil()
	if err != nil {
		t.Fatal(err)
	}
	before := w.Subscriptions()
	dir, port := s.n.Dir, s.n.Port
	s.n.Stop() // SIGTERM: anvil writes its state
	timeout := time.After(30 * time.Second)
	for w.Subscriptions() < before+2 { // lost, and at least one refused retry
		select {
		case <-attempts:
		case <-timeout:
			t.Fatalf("no resubscription attempt while anvil was down (%d subscriptions)", w.Subscriptions())
		}
	}
	a, err := ethdev.StartAnvil(context.Background(), bin, dir, port, "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	s.n.Anvil = a
	// Anvil restarted from its state file serves the state of the blocks
	// it mines from then on only ("BlockOutOfRangeError: block height is 11
	// but requested was 9"), where a real node keeps its recent states
	// across a restart. The balance check reads balances at the tip minus
	// the confirmations required plus one, so blocks past the restart come
	// first; they are mined before the scanner resubscribes, which the
	// next notified block makes it scan.
	s.mine(2)
	subscribed()
	paidAndSeen("31.00")
}
