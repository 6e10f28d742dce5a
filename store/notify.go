package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/clock"
)

// ErrStopped is returned by Subscribe once the store's background work was
// stopped (Run's context ended, or Close).
var ErrStopped = errors.New("store listeners are stopped")

// background owns the goroutines a Store runs (its listeners): they run
// under ctx, which stop cancels before waiting for them.
type background struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	done   bool
	wg     sync.WaitGroup
}

// newBackground's context keeps the values of the opening context, not its
// cancellation: Run or Close ends it.
func newBackground(ctx context.Context) *background {
	b := &background{}
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return b
}

// goRun runs f as background work (f watches b.ctx); false when stopped.
func (b *background) goRun(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
	return true
}

// stop ends the background work and waits for it. Calling it twice is
// harmless.
func (b *background) stop() {
	b.mu.Lock()
	b.done = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}

// Run holds the store's background work (the shared LISTEN connections of
// its notifiers) to ctx: when ctx ends it stops them and returns once they
// have stopped, so the daemon's errgroup owns them. Without Run, Close
// stops them. Run also runs the probe that notices a lost server (see
// Options.ProbeInterval) until ctx ends.
func (s *Store) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() { defer close(done); s.probe(ctx) }()
	<-ctx.Done()
	s.bg.stop()
	<-done
	return nil
}

// Notifier shares one LISTEN connection on a channel (EventsChannel,
// AddressesChannel) among every waiter of the process (long-polling
// readers, webhook senders, scanners). The connection is
// separate from the pool; it is opened by the first subscriber and closed
// Linger after the last one leaves, or when the store's background work
// stops (Store.Run, Close). While it reconnects after an error,
// every subscriber is woken (a notification may have been missed), so a
// subscriber that re-reads the events table on every wake never misses an
// event.
type Notifier struct {
	store   *Store
	channel string
	linger  time.Duration

	mu      sync.Mutex
	subs    map[*Subscription]struct{}
	running bool
	ready   chan struct{} // closed while LISTEN is active
	stop    context.CancelFunc
	idle    *time.Timer
}

// Subscription receives a value on C (buffered, coalesced) after every
// NOTIFY on the notifier's channel and after every reconnection.
type Subscription struct {
	C chan struct{}
	n *Notifier
}

type notifierKey struct {
	store   *Store
	channel string
}

var (
	notifiersMu sync.Mutex
	notifiers   = map[notifierKey]*Notifier{}
)

// Notifier returns the process-wide notifier of this store on
// EventsChannel.
func (s *Store) Notifier() *Notifier { return s.NotifierOn(EventsChannel) }

// NotifierOn returns the process-wide notifier of this store on channel
// (EventsChannel, AddressesChannel).
func (s *Store) NotifierOn(channel string) *Notifier {
	notifiersMu.Lock()
	defer notifiersMu.Unlock()
	k := notifierKey{s, channel}
	n := notifiers[k]
	if n == nil {
		n = &Notifier{store: s, channel: channel, linger: 30 * time.Second, subs: map[*Subscription]struct{}{}}
		notifiers[k] = n
	}
	return n
}

// Subscribe registers a waiter and returns once LISTEN is active, so that
// any event committed after Subscribe returns wakes it. It fails only when
// ctx ends first or the store's background work is stopped (ErrStopped).
func (n *Notifier) Subscribe(ctx context.Context) (*Subscription, error) {
	sub := &Subscription{C: make(chan struct{}, 1), n: n}
	n.mu.Lock()
	n.subs[sub] = struct{}{}
	if n.idle != nil {
		n.idle.Stop()
		n.idle = nil
	}
	if !n.running && !n.start() {
		delete(n.subs, sub)
		n.mu.Unlock()
		return nil, ErrStopped
	}
	ready := n.ready
	n.mu.Unlock()
	select {
	case <-ready:
		return sub, nil
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	}
}

// Close unregisters the subscription.
func (sub *Subscription) Close() {
	n := sub.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.subs[sub]; !ok {
		return
	}
	delete(n.subs, sub)
	if len(n.subs) == 0 && n.running && n.idle == nil {
		n.idle = time.AfterFunc(n.linger, func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.idle = nil
			if len(n.subs) == 0 && n.stop != nil {
				n.stop()
			}
		})
	}
}

// start runs the listener as the store's background work; n.mu is held
// (the listener takes it before touching the notifier). It is false when
// that work was stopped.
func (n *Notifier) start() bool {
	ctx, cancel := context.WithCancel(n.store.bg.ctx)
	if !n.store.bg.goRun(func() { defer cancel(); n.run(ctx) }) {
		cancel()
		return false
	}
	n.running, n.stop, n.ready = true, cancel, make(chan struct{})
	return true
}

func (n *Notifier) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for sub := range n.subs {
		select {
		case sub.C <- struct{}{}:
		default:
		}
	}
}

// reconnect spaces the listener's reconnections.
var reconnect = clock.Backoff{Min: 50 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.5}

func (n *Notifier) run(ctx context.Context) {
	failures := 0
	for ctx.Err() == nil {
		err := n.listen(ctx)
		if ctx.Err() != nil {
			break
		}
		_ = err // the connection broke: wake everyone and reconnect
		n.mu.Lock()
		select {
		case <-n.ready:
			n.ready = make(chan struct{})
		default:
		}
		empty := len(n.subs) == 0
		n.mu.Unlock()
		n.broadcast()
		if empty {
			break
		}
		failures++
		t := time.NewTimer(reconnect.Delay(failures))
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	n.mu.Lock()
	n.running, n.stop = false, nil
	if len(n.subs) > 0 {
		n.start()
	}
	n.mu.Unlock()
}

// listen holds one connection until it fails or ctx ends.
func (n *Notifier) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, n.store.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{n.channel}.Sanitize()); err != nil {
		return err
	}
	n.mu.Lock()
	select {
	case <-n.ready:
	default:
		close(n.ready)
	}
	n.mu.Unlock()
	// Anything committed while we were connecting is found by the readers'
	// re-read on this wake.
	n.broadcast()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		n.broadcast()
	}
}
