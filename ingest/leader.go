package ingest

import (
	"context"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/store"
)

// DefaultLeaseRetry is how long a standby waits before it tries again for
// a network's lease.
const DefaultLeaseRetry = 5 * time.Second

// Leader runs a network's scanner on the one instance that holds the
// network's lease (a PostgreSQL advisory lock held on its own connection):
// a standby retries until the leader goes away, and a leader that loses
// its lease stops scanning at once. Several instances may run a Leader of
// the same network; one scans.
type Leader struct {
	Store *store.Store
	// Sink is what the scanner writes to.
	Sink *Sink
	// Scanner configures the scanner; Scanner.Network names the lease.
	Scanner chains.ScannerConfig
	// Source is the network's node client.
	Source chains.Source
	// Watch is the network's watched set, kept by the scanner's Keys.
	Watch *chains.WatchSet
	// Retry is a standby's wait between tries; 0 is DefaultLeaseRetry.
	Retry time.Duration
	// Leading, when set, is told when this instance starts (true) and
	// stops (false) leading.
	Leading func(bool)
	Log     *slog.Logger
}

// Run leads or stands by until ctx ends; it returns an error only when a
// scanner it ran failed.
func (l *Leader) Run(ctx context.Context) error {
	n := l.Scanner.Network
	log := logs.Or(l.Log).With("component", "leader", "network", string(n))
	retry := l.Retry
	if retry <= 0 {
		retry = DefaultLeaseRetry
	}
	for {
		lease, ok, err := l.Store.TryLease(ctx, string(n), nil)
		if err != nil && ctx.Err() == nil {
			log.Warn("taking the scanner lease failed", "err", err)
		}
		if ok {
			log.Info("leading the scanner")
			l.leading(true)
			err := l.scan(ctx, lease, log)
			l.leading(false)
			if err != nil {
				return err
			}
		}
		wait := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil
		case <-wait.C:
		}
	}
}

func (l *Leader) leading(yes bool) {
	if l.Leading != nil {
		l.Leading(yes)
	}
}

// scan runs the scanner under lease until ctx ends or the lease is lost,
// with its helpers (lease watch, address wake-ups, node notifications) in
// one group: it returns once they have all stopped, and releases the
// lease.
func (l *Leader) scan(ctx context.Context, lease *store.Lease, log *slog.Logger) error {
	defer lease.Release()
	keys := &Keys{Store: l.Store}
	sc := chains.NewScanner(l.Scanner, l.Source, l.Sink.ScannerSinks(), keys, l.Watch, logs.Or(l.Log))
	g, gctx := errgroup.WithContext(ctx)
	sctx, cancel := context.WithCancel(gctx)
	defer cancel()
	g.Go(func() error {
		select {
		case <-lease.Lost():
			log.Warn("scanner lease lost; stopping the scanner")
			cancel()
		case <-sctx.Done():
		}
		return nil
	})
	// Addresses handed out by another instance wake the scanner.
	g.Go(func() error { return keys.Listen(sctx, sc.Wake) })
	if nt, ok := l.Source.(chains.Notifier); ok {
		// Polling stays the floor; node notifications only wake it early.
		g.Go(func() error { return chains.KeepNotified(sctx, nt, sc.Wake, chains.NotifyConfig{}, log) })
	}
	g.Go(func() error {
		defer cancel() // the scanner ended: so do its helpers
		return sc.Run(sctx)
	})
	return g.Wait()
}
