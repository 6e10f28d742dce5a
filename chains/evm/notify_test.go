package evm_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
)

// TestNotifyWakesOnBlocksAndSurvivesNodeRestart: the newHeads subscription
// wakes on a mined block; when anvil is killed the subscription is lost,
// KeepNotified resubscribes to the restarted node (same port), and the next
// block wakes again.
func TestNotifyWakesOnBlocksAndSurvivesNodeRestart(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	a, err := ethdev.StartAnvil(ctx, bin, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	port := a.Port
	t.Cleanup(func() { a.Stop() })
	c := newClient(t, a.RPCURL, evm.TraceOff, nil, nil)
	wakes := make(chan struct{}, 1000)
	subscribed := make(chan struct{}, 100)
	n := subscriptions{Notifier: c, began: subscribed}
	go chains.KeepNotified(ctx, n, func() { wakes <- struct{}{} },
		chains.NotifyConfig{MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}, nil)
	// Mine until a wake arrives: the subscription may not be set up yet
	// when the first block is mined.
	waitWake := func(what string) {
		t.Helper()
		for {
			if err := a.Mine(ctx, 1); err != nil {
				t.Fatalf("%s: mine: %v", what, err)
			}
			select {
			case <-wakes:
				return
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				t.Fatalf("%s: no wake", what)
			}
		}
	}
	<-subscribed
	waitWake("first subscription")
	a.Kill()
	if a, err = ethdev.StartAnvil(ctx, bin, dir, port); err != nil {
		t.Fatal(err)
	}
	// The loss wakes once before the next subscription begins; only a wake
	// after that one is a notification from the restarted node.
	select {
	case <-subscribed:
	case <-ctx.Done():
		t.Fatal("no resubscription after the restart")
	}
	for len(wakes) > 0 {
		<-wakes
	}
	waitWake("after the restart")
}

// subscriptions reports each Notify call (each subscription attempt).
type subscriptions struct {
	chains.Notifier
	began chan<- struct{}
}

func (s subscriptions) Notify(ctx context.Context, wake func()) error {
	s.began <- struct{}{}
	return s.Notifier.Notify(ctx, wake)
}
