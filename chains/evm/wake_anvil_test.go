package evm_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
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
		c.Methods[string(payment.ETH)].Confirmations = &three
	})
	s.sync()

	ctx, cancel := context.WithCancel(context.Background())
	nc := s.Config.Networks[string(payment.Ethereum)]
	steps := make(chan error, 1000)
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Ethereum, PollInterval: time.Hour, MaxBackoff: 200 * time.Millisecond,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, Observe: func(err error) { steps <- err }},
		s.src, s.Sink.ScannerSinks(), &ingest.Keys{Store: s.Store}, s.Watch[payment.Ethereum], nil)
	notes := make(chan struct{}, 1000) // the node's notifications, not KeepNotified's wake after a loss
	var subscriptions atomic.Int64
	attempts := make(chan struct{}, 1000)
	nt := notifierFunc(func(ctx context.Context, wake func()) error {
		subscriptions.Add(1)
		attempts <- struct{}{}
		return s.src.Notify(ctx, func() { notes <- struct{}{}; wake() })
	})
	done := make(chan error, 2)
	go func() { done <- sc.Run(ctx) }()
	go func() {
		done <- chains.KeepNotified(ctx, nt, sc.Wake, chains.NotifyConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}, nil)
	}()
	defer func() {
		cancel()
		for i := 0; i < 2; i++ {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()
	if err := <-steps; err != nil {
		t.Fatal(err)
	}
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
	before := subscriptions.Load()
	dir, port := s.n.Dir, s.n.Port
	s.n.Stop() // SIGTERM: anvil writes its state
	timeout := time.After(30 * time.Second)
	for subscriptions.Load() < before+2 { // lost, and at least one refused retry
		select {
		case <-attempts:
		case <-timeout:
			t.Fatalf("no resubscription attempt while anvil was down (%d subscriptions)", subscriptions.Load())
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

// notifierFunc adapts a function to chains.Notifier.
type notifierFunc func(ctx context.Context, wake func()) error

func (f notifierFunc) Notify(ctx context.Context, wake func()) error { return f(ctx, wake) }
