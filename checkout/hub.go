package checkout

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Feed is what the hub reads: the event feed's head and the intents its
// new events are about, and the versions of the intents waiting for
// confirmations. *store.Store implements it.
type Feed interface {
	LastEventSeq(ctx context.Context) (int64, error)
	EventIntentsAfter(ctx context.Context, after int64, limit int) ([]store.EventRef, error)
	IntentVersions(ctx context.Context, ids []string) (map[string]store.IntentVersion, error)
}

// Waker wakes the hub when events were appended: the store's shared
// LISTEN connection on the event channel (NotifierWaker), the one the event
// feed's long-polls and the webhook senders wait on. Subscribe returns once
// every event committed afterwards is sure to wake the subscription.
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

// Reader reads an intent as the API shows it (intents.Service.Get).
type Reader interface {
	Get(ctx context.Context, id string) (views.Intent, error)
}

// errStopped refuses a watch once the hub stopped (or before it runs).
var errStopped = errors.New("checkout: the live hub is not running")

const (
	// eventBatch is the most event references one read fetches.
	eventBatch = 1000
	// safetyTicks is how many progress ticks pass between reads of the event
	// feed without a wake-up (a safety net, as the feed's own poll).
	safetyTicks = 5
	// refreshParallel is how many intents the hub reads at once.
	refreshParallel = 4
)

// Hub tells every open page of this process when its intent changed.
// One goroutine follows the event feed for all pages: on a NOTIFY it reads
// the references of the new events once, whatever the number of pages,
// and reads again (once per intent, not per page) the intents they name
// that have open pages. Another checks, every ProgressInterval, the
// versions of the intents waiting for confirmations (one query for all of
// them), as confirmation counts, mined transfers and further partial
// payments are not events: an intent whose row or transfers changed is read
// again; one whose network only grew a block gets its confirmations
// recounted from its last view, without a read. A page's connection
// receives the intent's newest view; nothing polls per page.
type Hub struct {
	feed     Feed
	wake     Waker
	read     Reader
	progress time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	watched map[string]*watch
	known   bool  // head is the feed's head as of a moment when pages were watched
	head    int64 // events up to head are accounted for
	tickets uint64
	retry   map[string]bool
	running bool
	ready   chan struct{} // closed once Run listens
	done    chan struct{} // closed when Run returns
}

// watch is one intent with open pages.
type watch struct {
	subs map[*Sub]struct{}
	// inFlight: its last view was waiting for confirmations or the rest of
	// the amount (detected); its version is checked every tick.
	inFlight bool
	ver      *store.IntentVersion
	// view is the newest view handed out, from the read of ticket: reads
	// run concurrently, and one that started earlier never replaces what a
	// later one found.
	view   *views.Intent
	ticket uint64
}

// Sub is one open page's subscription to its intent.
type Sub struct {
	hub    *Hub
	id     string
	ticket uint64 // of the page's own read, which follows Watch
	// C receives (buffered, coalesced) when a new view is ready (Take).
	C      chan struct{}
	mu     sync.Mutex
	latest *views.Intent
}

// NewHub returns a hub; Run makes it serve.
func NewHub(feed Feed, wake Waker, read Reader, progress time.Duration, log *slog.Logger) *Hub {
	log = logs.Or(log)
	return &Hub{feed: feed, wake: wake, read: read, progress: progress, log: log,
		watched: map[string]*watch{}, retry: map[string]bool{}, ready: make(chan struct{}), done: make(chan struct{})}
}

// Watch subscribes to intent id's changes. Read the intent after Watch
// returns and pass it to Seen: every change committed after that read
// reaches the subscription. It fails when the hub does not run.
func (h *Hub) Watch(ctx context.Context, id string) (*Sub, error) {
	select {
	case <-h.ready:
	case <-h.done:
		return nil, errStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.done:
		return nil, errStopped
	default:
	}
	if !h.known {
		// The first page after none: events up to the head are in the
		// intent every page reads after Watch.
		seq, err := h.feed.LastEventSeq(ctx)
		if err != nil {
			return nil, err
		}
		h.head, h.known = max(h.head, seq), true
	}
	w := h.watched[id]
	if w == nil {
		w = &watch{subs: map[*Sub]struct{}{}}
		h.watched[id] = w
	}
	h.tickets++
	s := &Sub{hub: h, id: id, ticket: h.tickets, C: make(chan struct{}, 1)}
	w.subs[s] = struct{}{}
	return s, nil
}

// Seen tells the hub the view the page read itself (after Watch).
func (s *Sub) Seen(v views.Intent) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watched[s.id]; w != nil && s.ticket > w.ticket {
		w.view, w.ticket, w.inFlight = &v, s.ticket, inFlight(v)
	}
}

// Take returns the newest view delivered since the last Take, or nil.
func (s *Sub) Take() *views.Intent {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.latest
	s.latest = nil
	return v
}

func (s *Sub) put(v *views.Intent) {
	s.mu.Lock()
	s.latest = v
	s.mu.Unlock()
	select {
	case s.C <- struct{}{}:
	default:
	}
}

// Close ends the subscription.
func (s *Sub) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.watched[s.id]
	if w == nil {
		return
	}
	delete(w.subs, s)
	if len(w.subs) == 0 {
		delete(h.watched, s.id)
		delete(h.retry, s.id)
	}
	if len(h.watched) == 0 {
		h.known = false // nobody to read for: events are not followed
	}
}

// Done is closed when the hub stops: open pages end their streams.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Pages returns the number of intents with open pages and of open pages.
func (h *Hub) Pages() (intents, pages int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.watched {
		pages += len(w.subs)
	}
	return len(h.watched), pages
}

// inFlight reports whether an intent's page can change without an event:
// a detected intent gains confirmations and partial payments.
func inFlight(v views.Intent) bool { return v.Status == payment.IntentDetected }

// Run serves the open pages until ctx ends; it returns nil then.
func (h *Hub) Run(ctx context.Context) error {
	h.mu.Lock()
	if h.running {
		h.mu.Unlock()
		return errors.New("checkout: the live hub runs once")
	}
	h.running = true
	h.mu.Unlock()
	defer close(h.done)
	sub, err := h.wake.Subscribe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer sub.Close()
	close(h.ready)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		// Progress apart from events: recounting a block's confirmations
		// never delays a status change.
		tick := time.NewTicker(h.progress)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				h.checkProgress(ctx)
			}
		}
	})
	safety := time.NewTicker(safetyTicks * h.progress)
	defer safety.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.C():
			h.readEvents(ctx)
		case <-safety.C:
			h.readEvents(ctx)
		}
	}
}

// readEvents reads the references of the events after the head and
// refreshes the watched intents they name.
func (h *Hub) readEvents(ctx context.Context) {
	dirty := map[string]bool{}
	for {
		h.mu.Lock()
		if !h.known {
			h.mu.Unlock()
			break
		}
		after := h.head
		h.mu.Unlock()
		refs, err := h.feed.EventIntentsAfter(ctx, after, eventBatch)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("reading events for payment pages failed", "err", err)
			}
			break
		}
		h.mu.Lock()
		for _, r := range refs {
			if _, ok := h.watched[r.IntentID]; ok {
				dirty[r.IntentID] = true
			}
		}
		if len(refs) > 0 && h.known {
			h.head = max(h.head, refs[len(refs)-1].Seq)
		}
		h.mu.Unlock()
		if len(refs) < eventBatch {
			break
		}
	}
	h.refresh(ctx, dirty)
}

// checkProgress reads the versions of the intents waiting for
// confirmations: those whose row or transfers changed are read again, and
// those whose network only moved get their confirmations recounted.
func (h *Hub) checkProgress(ctx context.Context) {
	h.mu.Lock()
	var ids []string
	dirty := map[string]bool{}
	for id, w := range h.watched {
		if w.inFlight {
			ids = append(ids, id)
		}
	}
	for id := range h.retry {
		dirty[id] = true
	}
	clear(h.retry)
	h.mu.Unlock()
	if len(ids) > 0 {
		vers, err := h.feed.IntentVersions(ctx, ids)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("reading intent versions for payment pages failed", "err", err)
			}
		} else {
			h.mu.Lock()
			for id, v := range vers {
				w := h.watched[id]
				if w == nil || !w.inFlight {
					continue
				}
				switch {
				case w.ver == nil || w.view == nil || w.ver.Row != v.Row || w.ver.Transfers != v.Transfers:
					// First sight too: the page read its intent before.
					dirty[id] = true
				case w.ver.Tip != v.Tip:
					nv := withTip(*w.view, v.Tip)
					w.view = &nv
					for s := range w.subs {
						s.put(&nv)
					}
				}
				w.ver = &v
			}
			h.mu.Unlock()
		}
	}
	h.refresh(ctx, dirty)
}

// withTip is v with its transfers' confirmations counted at node height
// tip, as views.TransferOf counts them.
func withTip(v views.Intent, tip int64) views.Intent {
	v.Transfers = slices.Clone(v.Transfers)
	for i := range v.Transfers {
		t := &v.Transfers[i]
		if t.BlockHeight != nil && t.Status != payment.TransferOrphaned && tip >= *t.BlockHeight {
			t.Confirmations = tip - *t.BlockHeight + 1
		}
	}
	return v
}

// refresh reads each intent once and hands the view to its pages, unless
// a read that started later already did.
func (h *Hub) refresh(ctx context.Context, ids map[string]bool) {
	if len(ids) == 0 {
		return
	}
	sem := make(chan struct{}, refreshParallel)
	var wg sync.WaitGroup
	for id := range ids {
		sem <- struct{}{}
		h.mu.Lock()
		h.tickets++
		ticket := h.tickets
		h.mu.Unlock()
		wg.Go(func() {
			defer func() { <-sem }()
			v, err := h.read.Get(ctx, id)
			h.mu.Lock()
			defer h.mu.Unlock()
			w := h.watched[id]
			if w == nil {
				return
			}
			if err != nil {
				if ctx.Err() == nil {
					h.retry[id] = true // the next tick tries again
					h.log.Warn("reading an intent for its payment page failed", "intent", id, "err", err)
				}
				return
			}
			if ticket < w.ticket {
				return // a later read delivered already
			}
			w.view, w.ticket, w.inFlight = &v, ticket, inFlight(v)
			if !w.inFlight {
				w.ver = nil
			}
			for s := range w.subs {
				s.put(&v)
			}
		})
	}
	wg.Wait()
}
