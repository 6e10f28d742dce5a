package chainstest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
)

// Woken is a scanner that polls once an hour, so that only its node's
// notifications, kept up by chains.KeepNotified, make it scan: the
// harness of the push-wake tests against real and simulated nodes. It
// records what such a test waits on.
type Woken struct {
	// Steps receives every scanner step's result.
	Steps chan error
	// Notes receives one value per notification from the node (not
	// KeepNotified's own wake after a lost subscription).
	Notes chan struct{}
	// Attempts receives one value per subscription attempt.
	Attempts chan struct{}

	subscriptions atomic.Int64
}

// Subscriptions is the number of subscription attempts so far.
func (w *Woken) Subscriptions() int64 { return w.subscriptions.Load() }

// RunWoken starts the scanner of cfg (its PollInterval, MaxBackoff and
// Observe are set here) and KeepNotified on notifier, returns after the
// scanner's first step (failing t if it failed), and stops both when the
// test ends, failing t if either returns an error.
func RunWoken(t testing.TB, cfg chains.ScannerConfig, src chains.Source, notifier chains.Notifier, sinks chains.Sinks,
	keys chains.KeySource, watched *chains.WatchSet) *Woken {
	t.Helper()
	w := &Woken{Steps: make(chan error, 1000), Notes: make(chan struct{}, 1000), Attempts: make(chan struct{}, 1000)}
	cfg.PollInterval, cfg.MaxBackoff = time.Hour, 200*time.Millisecond
	cfg.Observe = func(err error) { w.Steps <- err }
	sc := chains.NewScanner(cfg, src, sinks, keys, watched, nil)
	counted := notifierFunc(func(ctx context.Context, wake func()) error {
		w.subscriptions.Add(1)
		w.Attempts <- struct{}{}
		return notifier.Notify(ctx, func() { w.Notes <- struct{}{}; wake() })
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- sc.Run(ctx) }()
	go func() {
		done <- chains.KeepNotified(ctx, counted, sc.Wake, chains.NotifyConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}, nil)
	}()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	})
	if err := <-w.Steps; err != nil { // the first step; then it waits an hour
		t.Fatal(err)
	}
	return w
}

// notifierFunc adapts a function to chains.Notifier.
type notifierFunc func(ctx context.Context, wake func()) error

func (f notifierFunc) Notify(ctx context.Context, wake func()) error { return f(ctx, wake) }
