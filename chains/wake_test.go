package chains_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// flaky is a Notifier whose subscriptions each deliver one notification and
// are then lost, until the last one, which lives until ctx ends.
type flaky struct {
	lose  int
	calls atomic.Int32
}

func (f *flaky) Notify(ctx context.Context, wake func()) error {
	n := f.calls.Add(1)
	wake()
	if int(n) <= f.lose {
		return errors.New("websocket closed")
	}
	<-ctx.Done()
	return nil
}

// TestKeepNotifiedResubscribesAfterLoss: every lost subscription is retried
// and wakes once more (what changed while it was down is polled), and
// cancellation ends it cleanly.
func TestKeepNotifiedResubscribesAfterLoss(t *testing.T) {
	f := &flaky{lose: 3}
	wakes := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- chains.KeepNotified(ctx, f, func() { wakes <- struct{}{} },
			chains.NotifyConfig{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}, nil)
	}()
	// 3 lost subscriptions wake twice each (notification, loss), the last once.
	for i := 0; i < 7; i++ {
		<-wakes
	}
	if got := f.calls.Load(); got != 4 {
		t.Fatalf("%d subscriptions, want 4", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("KeepNotified after cancel: %v", err)
	}
}

type unsupported struct{}

func (unsupported) Notify(context.Context, func()) error {
	return chains.ErrNotifyUnsupported
}

func TestKeepNotifiedStopsWhenUnsupported(t *testing.T) {
	if err := chains.KeepNotified(context.Background(), unsupported{}, func() { t.Error("woken") }, chains.NotifyConfig{}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestWakeScansAtOnceAndSkipsNothing: with an hour between polls, a wake
// makes the running scanner read the new blocks, every one of them.
func TestWakeScansAtOnceAndSkipsNothing(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-WAKE", "", "10.00", "BTC")
	e.Sync(payment.Bitcoin)
	nc := e.Config.Networks[payment.Bitcoin]
	steps := make(chan error, 100)
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, PollInterval: time.Hour,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, Observe: func(err error) { steps <- err }},
		f, e.Sink.ScannerSinks(), nil, e.Watch[payment.Bitcoin], nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if err := <-steps; err != nil { // caught up: now it waits an hour
		t.Fatal(err)
	}
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "wake")
	f.Mine(3)
	tip := int64(f.TipHeight())
	sc.Wake()
	timeout := time.After(30 * time.Second)
	for cursorHeight(t, e, payment.Bitcoin) != tip {
		select {
		case err := <-steps:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatalf("cursor %d, tip %d: the wake did not scan", cursorHeight(t, e, payment.Bitcoin), tip)
		}
	}
	if n := count(t, e, "SELECT count(*) FROM blocks WHERE network = 'bitcoin' AND height > $1 AND height <= $2", tip-3, tip); n != 3 {
		t.Fatalf("%d of the 3 new blocks recorded", n)
	}
	if got := e.Intent(v.ID); len(got.Transfers) != 1 {
		t.Fatalf("transfers %+v, want the payment", got.Transfers)
	}
}
