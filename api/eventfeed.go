package api

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/paywatch/paywatch/store"
)

// EventReader reads the event feed in seq order after a seq, of the given
// types (every type when empty): the one query a long-poll wake-up costs.
// *store.Store implements it.
type EventReader interface {
	EventsAfter(ctx context.Context, after int64, types []string, limit int) ([]store.Event, error)
}

// Waker wakes the feed's reader when events may have been appended: a
// NOTIFY, or a reconnection after which one may have been missed. Subscribe
// returns once every event committed afterwards is sure to wake it.
type Waker interface {
	Subscribe(ctx context.Context) (Wakeup, error)
}

// Wakeup is one subscription of a Waker.
type Wakeup interface {
	// C receives after every wake (coalesced).
	C() <-chan struct{}
	// Close ends the subscription.
	Close()
}

// NotifierWaker is the Waker of the store's shared LISTEN connection.
type NotifierWaker struct{ N *store.Notifier }

// Subscribe subscribes to the notifier.
func (w NotifierWaker) Subscribe(ctx context.Context) (Wakeup, error) {
	sub, err := w.N.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	return notifierSub{sub}, nil
}

type notifierSub struct{ s *store.Subscription }

func (s notifierSub) C() <-chan struct{} { return s.s.C }
func (s notifierSub) Close()             { s.s.Close() }

// errTooManyWaiters refuses a long-poll beyond a cap.
var errTooManyWaiters = errors.New("too many waiting long-polls")

const (
	// feedBatch is the most events one read fetches.
	feedBatch = 1000
	// feedKeep is how many of the latest events the feed remembers, so a
	// client coming back with a recent cursor is answered, or starts
	// waiting, without a query.
	feedKeep = 4096
)

// eventFeed serves every long-polling reader of the process from one
// reader goroutine (Run). On a wake-up (NOTIFY, reconnection, its poll
// tick) it reads the events after the newest it knows, once, and hands each
// waiter the ones after its cursor that match its types. It remembers the
// latest events and the head (the newest seq as of its last read): as seq
// order is commit order (events are appended under one lock) and every
// commit after a read wakes it, a waiter whose cursor is in that window is
// served without a query. Only a waiter further behind costs a catch-up
// read of its own.
type eventFeed struct {
	read     EventReader
	wake     Waker
	poll     time.Duration
	max      int
	maxPerKy int
	log      *slog.Logger
	batch    int // events one read fetches at most (feedBatch)
	keep     int // events remembered (feedKeep)

	kick chan struct{} // a waiter needs a read
	done chan struct{} // closed when Run returns

	mu      sync.Mutex
	waiters map[*waiter]struct{}
	perKey  map[string]int
	// recent holds every event with seq in (lo, head], when known.
	known  bool
	stale  bool // a wake came since the last read: events after head may exist
	lo     int64
	head   int64
	recent []store.Event
	ran    bool
}

type waiter struct {
	key   string
	shop  string // the store whose events it wants ("": every store's)
	after int64  // the events it wants are after this (advanced past checked ones)
	types []string
	limit int
	ready chan []store.Event // buffered 1; written once, under mu
}

func newEventFeed(read EventReader, wake Waker, poll time.Duration, maxWaiters, maxPerKey int, log *slog.Logger) *eventFeed {
	return &eventFeed{read: read, wake: wake, poll: poll, max: maxWaiters, maxPerKy: maxPerKey, log: log,
		batch: feedBatch, keep: feedKeep,
		kick: make(chan struct{}, 1), done: make(chan struct{}),
		waiters: map[*waiter]struct{}{}, perKey: map[string]int{}}
}

// Wait returns the events after seq of the given types (up to limit) of
// shop ("": every store's), as soon as there are any, or nothing when ctx ends (the wait is over) or
// the feed stops. It fails with errTooManyWaiters beyond a cap, and with
// the reader's error.
func (f *eventFeed) Wait(ctx context.Context, key, shop string, after int64, types []string, limit int) ([]store.Event, error) {
	f.mu.Lock()
	if f.known && after >= f.lo {
		if evs := match(f.recent, shop, after, types, limit); len(evs) > 0 {
			f.mu.Unlock()
			return evs, nil
		}
	}
	if len(f.waiters) >= f.max || f.perKey[key] >= f.maxPerKy {
		f.mu.Unlock()
		return nil, errTooManyWaiters
	}
	w := &waiter{key: key, shop: shop, after: after, types: types, limit: limit, ready: make(chan []store.Event, 1)}
	if f.known && after >= f.lo {
		w.after = max(after, f.head)
	}
	f.waiters[w] = struct{}{}
	f.perKey[key]++
	needRead := f.stale || !f.known || after < f.lo
	f.mu.Unlock()
	if needRead {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	select {
	case evs := <-w.ready:
		return evs, nil
	case <-ctx.Done():
	case <-f.done:
	}
	f.mu.Lock()
	f.remove(w)
	f.mu.Unlock()
	select {
	case evs := <-w.ready: // delivered just as the wait ended
		return evs, nil
	default:
		return nil, nil
	}
}

// Waiting returns the number of waiting long-polls.
func (f *eventFeed) Waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// remove unregisters w; f.mu is held.
func (f *eventFeed) remove(w *waiter) {
	if _, ok := f.waiters[w]; !ok {
		return
	}
	delete(f.waiters, w)
	if f.perKey[w.key]--; f.perKey[w.key] == 0 {
		delete(f.perKey, w.key)
	}
}

// Run reads for the waiters until ctx ends; it returns nil then. A failed
// read is logged and retried at the next wake-up or tick.
func (f *eventFeed) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.ran {
		f.mu.Unlock()
		return errors.New("api: the event feed runs once")
	}
	f.ran = true
	f.mu.Unlock()
	defer close(f.done)
	sub, err := f.wake.Subscribe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer sub.Close()
	tick := time.NewTicker(f.poll)
	defer tick.Stop()
	for {
		if f.due() {
			more, err := f.step(ctx)
			switch {
			case ctx.Err() != nil:
				return nil
			case err != nil:
				f.log.Warn("reading events for long-polls failed", "err", err)
			case more:
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sub.C():
			f.setStale()
		case <-tick.C:
			f.setStale()
		case <-f.kick:
		}
	}
}

func (f *eventFeed) setStale() {
	f.mu.Lock()
	f.stale = true
	f.mu.Unlock()
}

// due reports whether a waiter needs a read.
func (f *eventFeed) due() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return false
	}
	if f.stale || !f.known {
		return true
	}
	for w := range f.waiters {
		if w.after < f.lo {
			return true
		}
	}
	return false
}

// step does one read and hands out its events; more means another read is
// due at once (a full batch).
func (f *eventFeed) step(ctx context.Context) (more bool, err error) {
	f.mu.Lock()
	var from int64
	catchUp, reset := false, false
	all := func(*waiter) bool { return true }
	switch {
	case !f.known:
		from = f.lowest(all)
	case f.stale:
		from = f.head
		if low := f.lowest(all); low > f.head {
			// Every waiter is past the window (after a client read far
			// behind): start a new window at them instead of reading up.
			from, reset = low, true
		}
	default:
		from = f.lowest(func(w *waiter) bool { return w.after < f.lo })
		catchUp = true
	}
	f.stale = f.stale && catchUp // a head read answers this wake-up
	f.mu.Unlock()

	// Reading from the cursor's own event on (seq > from-1) tells the head
	// even when nothing is new: it is that event.
	evs, err := f.read.EventsAfter(ctx, max(from-1, 0), nil, f.batch)
	if err != nil {
		f.setStale()
		return false, err
	}
	full := len(evs) == f.batch

	f.mu.Lock()
	defer f.mu.Unlock()
	lo := max(from-1, 0)
	if catchUp {
		// Far behind the remembered window: serve from this read only.
		floor := int64(0)
		if !full {
			floor = f.lo // the read covered the whole window too
		}
		f.serve(evs, lo, floor, func(w *waiter) bool { return w.after < f.lo && w.after >= lo })
		return full, nil
	}
	switch {
	case len(evs) > 0:
		if f.known && !reset && lo <= f.head {
			keep := f.recent[:0:0]
			for _, e := range f.recent {
				if e.Seq <= lo {
					keep = append(keep, e)
				}
			}
			f.recent = append(keep, evs...)
			f.lo = min(f.lo, lo)
		} else {
			f.recent, f.lo = slices.Clone(evs), lo
		}
		f.head, f.known = evs[len(evs)-1].Seq, true
	case lo == 0:
		f.recent, f.lo, f.head, f.known = nil, 0, 0, true // no event at all yet
	case reset:
		// Nothing at or after the waiters' cursors: they are ahead of the
		// table, and what follows the window is still unknown.
		f.stale = true
	default:
		// Nothing at or after the cursor: it is ahead of the table (the
		// head is unknown), or the table did not change.
	}
	if f.known {
		f.serve(f.recent, f.lo, 0, func(w *waiter) bool { return w.after >= f.lo })
	}
	if n := len(f.recent) - f.keep; n > 0 {
		f.lo = f.recent[n-1].Seq
		f.recent = slices.Clone(f.recent[n:])
	}
	if full {
		f.stale = true
	}
	return full, nil
}

// lowest returns the smallest cursor among the waiters that pick selects;
// f.mu is held.
func (f *eventFeed) lowest(pick func(*waiter) bool) int64 {
	first, low := true, int64(0)
	for w := range f.waiters {
		if pick(w) && (first || w.after < low) {
			first, low = false, w.after
		}
	}
	return low
}

// serve hands each waiter that pick selects its events from evs, which
// holds every event with seq in (lo, last]; a waiter left without any has
// been checked up to last (or floor). f.mu is held.
func (f *eventFeed) serve(evs []store.Event, lo, floor int64, pick func(*waiter) bool) {
	last := lo
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	for w := range f.waiters {
		if !pick(w) {
			continue
		}
		if got := match(evs, w.shop, w.after, w.types, w.limit); len(got) > 0 {
			w.ready <- got
			f.remove(w)
			continue
		}
		w.after = max(w.after, last, floor)
	}
}

// seqOf returns the seq of a remembered event id of shop ("": any
// store's).
func (f *eventFeed) seqOf(shop, id string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.recent) - 1; i >= 0; i-- {
		if f.recent[i].ID == id && (shop == "" || f.recent[i].Store == shop) {
			return f.recent[i].Seq, true
		}
	}
	return 0, false
}

// match returns up to limit events of evs (in seq order) after seq, of the
// given types (all when empty) and of shop ("": every store's), as the
// store's query would.
func match(evs []store.Event, shop string, after int64, types []string, limit int) []store.Event {
	i, _ := slices.BinarySearchFunc(evs, after, func(e store.Event, seq int64) int {
		switch {
		case e.Seq < seq:
			return -1
		case e.Seq > seq:
			return 1
		}
		return 0
	})
	for ; i < len(evs) && evs[i].Seq <= after; i++ {
	}
	var out []store.Event
	for _, e := range evs[i:] {
		if len(out) == limit {
			break
		}
		if (len(types) == 0 || slices.Contains(types, string(e.Type))) && (shop == "" || e.Store == shop) {
			out = append(out, e)
		}
	}
	return out
}
