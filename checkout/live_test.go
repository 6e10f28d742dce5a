package checkout_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// countingFeed counts the hub's reads.
type countingFeed struct {
	checkout.Feed
	events, versions *atomic.Int64
}

func (f countingFeed) EventIntentsAfter(ctx context.Context, after int64, limit int) ([]store.EventRef, error) {
	f.events.Add(1)
	return f.Feed.EventIntentsAfter(ctx, after, limit)
}

func (f countingFeed) IntentVersions(ctx context.Context, ids []string) (map[string]store.IntentVersion, error) {
	f.versions.Add(1)
	return f.Feed.IntentVersions(ctx, ids)
}

// countingWaker counts the wake-ups it passes on.
type countingWaker struct {
	checkout.Waker
	wakes *atomic.Int64
}

type countingWakeup struct {
	checkout.Wakeup
	c chan struct{}
}

func (w countingWaker) Subscribe(ctx context.Context) (checkout.Wakeup, error) {
	sub, err := w.Waker.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	out := countingWakeup{Wakeup: sub, c: make(chan struct{})}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub.C():
				select {
				case out.c <- struct{}{}:
					w.wakes.Add(1) // the hub took it
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func (w countingWakeup) C() <-chan struct{} { return w.c }

// One hub serves every open page: each wake-up of the event feed's NOTIFY
// costs one read of the feed whatever the number of pages, and a changed
// intent is read once for all its pages; pages of intents that did not
// change cost nothing.
func TestHubReadsOncePerWakeForAllPages(t *testing.T) {
	var events, versions, wakes atomic.Int64
	gets := &intentGets{n: map[string]int{}}
	s := newSite(t, siteOptions{
		checkout: func(c *config.Checkout) {
			c.ProgressInterval = config.Duration{Duration: time.Minute} // no tick in this test
			c.MaxLivePerClient = 100
		},
		feed: func(f checkout.Feed) checkout.Feed {
			return countingFeed{Feed: f, events: &events, versions: &versions}
		},
		wake: func(w checkout.Waker) checkout.Waker { return countingWaker{Waker: w, wakes: &wakes} },
		wrap: func(in checkout.Intents) checkout.Intents { gets.Intents = in; return gets },
	})
	var streams []*stream
	target := s.create(t, "ORD-HUB-0", "10.00", nil)
	for i := 0; i < 10; i++ { // ten tabs of one page
		st := s.openStream(t, s.pageOf(t, target)+"/live")
		st.next(t, 10*time.Second)
		streams = append(streams, st)
	}
	for i := 1; i < 40; i++ {
		in := s.create(t, fmt.Sprintf("ORD-HUB-%d", i), "10.00", nil)
		st := s.openStream(t, s.pageOf(t, in)+"/live")
		st.next(t, 10*time.Second)
	}
	e0, w0, g0 := events.Load(), wakes.Load(), gets.of(target.ID)

	s.Pay(target, payment.Native, half(target), "hub-half")
	s.Sync(payment.Bitcoin)
	for _, st := range streams {
		if m := st.until(t, "underpaid", 10*time.Second); !strings.Contains(m.HTML, "still missing") {
			t.Fatalf("tab: %q", m.HTML)
		}
	}
	if dw, de := wakes.Load()-w0, events.Load()-e0; de < 1 || de > dw+1 {
		t.Fatalf("%d wake-ups, %d reads of the feed: want at most one read per wake-up for 49 pages", dw, de)
	}
	// Once per read of the feed in which it changed, for all its ten pages
	// (the payment may be decided in more than one commit, seen then mined,
	// whose events a loaded machine reads apart); a read per page would be
	// ten per read of the feed. (Other intents' late creation events may be
	// read too: only the target's reads count here.)
	if dg, de := int64(gets.of(target.ID)-g0), events.Load()-e0; dg < 1 || dg > de || dg >= int64(len(streams)) {
		t.Fatalf("the changed intent was read %d times for its %d pages in %d reads of the feed; want once per read", dg, len(streams), de)
	}
	if versions.Load() != 0 {
		t.Fatalf("the progress check ran %d times without a tick", versions.Load())
	}
	if intents, pages := s.Page.Hub().Pages(); intents != 40 || pages != 49 {
		t.Fatalf("hub: %d intents, %d pages", intents, pages)
	}
}

// A stream lives past the server's read and write timeouts (which are for
// requests), and ends when the hub stops.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	s := newSite(t, siteOptions{server: func(srv *http.Server) {
		srv.ReadTimeout, srv.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	}})
	in := s.create(t, "ORD-TIMEOUT", "10.00", nil)
	st := s.openStream(t, s.pageOf(t, in)+"/live")
	st.next(t, 10*time.Second)
	// Waiting is the point: past both timeouts, the stream still delivers.
	time.Sleep(time.Second)
	s.Pay(in, payment.Native, half(in), "late-half")
	s.Sync(payment.Bitcoin)
	st.until(t, "underpaid", 10*time.Second)
}

// A block that only adds a confirmation is recounted from the page's last
// view, without reading the intent again; a block that changes a transfer
// (mined, confirmed) reads it again.
func TestConfirmationsRecountedWithoutARead(t *testing.T) {
	var gets, events, versions atomic.Int64
	s := newSite(t, siteOptions{
		env: []paywatchtest.Option{paywatchtest.WithConfig(func(c *config.Config) {
			three := 3
			c.Methods["BTC"].Confirmations = &three
		})},
		feed: func(f checkout.Feed) checkout.Feed {
			return countingFeed{Feed: f, events: &events, versions: &versions}
		},
		wrap: func(in checkout.Intents) checkout.Intents { return countingIntents{Intents: in, gets: &gets} },
	})
	btc := payment.Bitcoin
	in := s.create(t, "ORD-RECOUNT", "10.00", nil)
	st := s.openStream(t, s.pageOf(t, in)+"/live")
	st.next(t, 10*time.Second)
	s.Pay(in, payment.Native, paywatchtest.Units(in.AmountBaseUnits), "recount")
	s.Sync(btc)
	st.untilHTML(t, "1 of 3 confirmations", 10*time.Second)
	// The first progress check reads it once (the page's own read came
	// first); then only the block.
	v0 := versions.Load()
	waitUntil(t, func() bool { return versions.Load() >= v0+2 })
	g0 := gets.Load()
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	m := st.next(t, 10*time.Second)
	if !strings.Contains(m.HTML, "2 of 3 confirmations") || m.State != "confirming" {
		t.Fatalf("after a block: %+v", m)
	}
	if d := gets.Load() - g0; d != 0 {
		t.Fatalf("a block that only added a confirmation read the intent %d times", d)
	}
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	st.until(t, "paid", 10*time.Second)
}

// intentGets counts the reads of each intent.
type intentGets struct {
	checkout.Intents
	mu sync.Mutex
	n  map[string]int
}

func (g *intentGets) Get(ctx context.Context, id string) (views.Intent, error) {
	g.mu.Lock()
	g.n[id]++
	g.mu.Unlock()
	return g.Intents.Get(ctx, id)
}

func (g *intentGets) of(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n[id]
}
