package ingest

import (
	"context"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// DefaultLeaseRetry is how long a standby waits before it tries again for
// a network's lease.
const DefaultLeaseRetry = 5 * time.Second

// Leader runs a network's scanner on the one instance that holds the
// network's lease (store.Lease: a row with a holder, a token and an expiry
// by the database's clock, renewed by the holder): a standby retries until
// the lease expires or is released, and a leader that loses its lease
// stops scanning at once. Several instances may run a Leader of the same
// network; one scans.
//
// A leader that stops making progress without dying (SIGSTOP, a VM pause,
// a long GC: its sockets stay open) stops renewing, and a standby takes the
// lease within TTL + Retry (15 s with the defaults). Every write of the
// scanner carries the lease's fence (Sink.Fenced), checked in the write's
// own transaction: when the frozen one wakes, its writes fail with
// store.ErrFenced and change nothing, and it stands by.
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
	// Holder names this instance in the lease (the status's leader).
	Holder string
	// TTL is the lease's life without a renewal; 0 is
	// store.DefaultLeaseTTL.
	TTL time.Duration
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
		lease, ok, err := l.Store.TryLease(ctx, LeaseName(n), store.LeaseConfig{Holder: l.Holder, TTL: l.TTL})
		if err != nil && ctx.Err() == nil {
			log.Warn("taking the scanner lease failed", "err", err)
		}
		if ok {
			log.Info("leading the scanner")
			l.leading(true)
			err := l.scan(ctx, lease, log) // (it says it stopped leading)
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
// one group: it returns once they have all stopped, says it no longer
// leads and releases the lease.
func (l *Leader) scan(ctx context.Context, lease *store.Lease, log *slog.Logger) error {
	// It stops leading before the lease is free for a standby to take.
	defer func() {
		l.leading(false)
		lease.Release()
	}()
	keys := &Keys{Store: l.Store}
	g, gctx := errgroup.WithContext(ctx)
	sctx, cancel := context.WithCancel(gctx)
	defer cancel()
	cfg := l.Scanner
	observe := cfg.Observe
	standBy := func(err error) {
		if store.IsFenced(err) {
			// Another instance took the lease while this one did not
			// renew it (frozen, cut off): nothing was written.
			log.Warn("scanner lease taken over by another instance; standing by", "err", err)
			cancel()
		}
	}
	cfg.Observe = func(err error) {
		standBy(err)
		if observe != nil {
			observe(err)
		}
	}
	sinks := l.Sink.Fenced(lease.Fence()).ScannerSinks()
	// A quiet step writes nothing but the health record (an empty mempool
	// read after an empty one is not applied): its fenced write says the
	// lease is another's as a step's would, at the next poll rather than
	// at the lease watch's next renewal.
	sinks.Health = fencedHealth{sinks.Health, standBy}
	sc := chains.NewScanner(cfg, l.Source, sinks, keys, l.Watch, logs.Or(l.Log))
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

// fencedHealth records the health and tells its error to standBy.
type fencedHealth struct {
	chains.HealthRecorder
	standBy func(error)
}

func (h fencedHealth) SetHealth(ctx context.Context, n payment.Network, hl chains.Health) error {
	err := h.HealthRecorder.SetHealth(ctx, n, hl)
	h.standBy(err)
	return err
}

// LeaseName is the name of network n's scanner lease.
func LeaseName(n payment.Network) string { return "scanner." + string(n) }
