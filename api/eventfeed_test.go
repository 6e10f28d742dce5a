package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// countingReader counts the reads that reach the database.
type countingReader struct {
	st    *store.Store
	reads atomic.Int64
}

func (c *countingReader) EventsAfter(ctx context.Context, after int64, types []string, limit int) ([]store.Event, error) {
	c.reads.Add(1)
	return c.st.EventsAfter(ctx, after, types, limit)
}

// manualWaker wakes the feed only when the test says so.
type manualWaker struct{ c chan struct{} }

func (m *manualWaker) Subscribe(context.Context) (Wakeup, error) { return m, nil }
func (m *manualWaker) C() <-chan struct{}                        { return m.c }
func (m *manualWaker) Close()                                    {}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, devnettest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// appendEvents commits one transaction appending an event of each type.
func appendEvents(t testing.TB, st *store.Store, types ...string) []store.Event {
	var out []store.Event
	err := st.InTx(context.Background(), func(tx *store.Tx) error {
		for _, typ := range types {
			ev, err := tx.AppendEvent(context.Background(), payment.EventType(typ), "", "", "", map[string]int{"n": len(out)}, time.Now())
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	return out
}

func runFeed(t *testing.T, f *eventFeed) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func ids(evs []store.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// One wake-up costs one read, whether 2 or 300 clients wait, and each gets
// what its type filter selects.
func TestEventFeedOneReadPerWakeup(t *testing.T) {
	st := openStore(t)
	for _, n := range []int{2, 300} {
		t.Run(fmt.Sprint(n, "waiters"), func(t *testing.T) {
			base := appendEvents(t, st, "intent.created", "intent.created")
			head := base[len(base)-1].Seq
			reader := &countingReader{st: st}
			wake := &manualWaker{c: make(chan struct{})}
			f := newEventFeed(reader, wake, time.Hour, 10000, 10000, slog.New(slog.DiscardHandler))
			runFeed(t, f)

			type result struct {
				i   int
				evs []store.Event
				err error
			}
			results := make(chan result, n)
			start := func(i int, after int64) {
				types := []string{}
				if i%2 == 1 {
					types = []string{"intent.paid"}
				}
				go func() {
					evs, err := f.Wait(context.Background(), fmt.Sprint("key", i%7), "", after, types, 100)
					results <- result{i, evs, err}
				}()
			}
			for i := range n {
				start(i, head)
			}
			waitFor(t, "every waiter registered and the head known", func() bool {
				f.mu.Lock()
				defer f.mu.Unlock()
				return len(f.waiters) == n && f.known && !f.stale
			})
			if r := reader.reads.Load(); r != 1 {
				t.Fatalf("%d reads before any event, want 1 (the first waiter learns the head)", r)
			}

			// An event every waiter wants: one read answers all.
			paid := appendEvents(t, st, "intent.paid")
			wake.c <- struct{}{}
			for range n {
				r := <-results
				if r.err != nil || !slices.Equal(ids(r.evs), ids(paid)) {
					t.Fatalf("waiter %d: %v %v, want %v", r.i, ids(r.evs), r.err, ids(paid))
				}
			}
			if r := reader.reads.Load(); r != 2 {
				t.Fatalf("%d reads after one wake-up, want 2", r)
			}

			// They come back from the event they got: no read at all.
			for i := range n {
				start(i, paid[0].Seq)
			}
			waitFor(t, "every waiter back", func() bool { return f.Waiting() == n })
			// An event only the unfiltered half wants: one read; the other
			// half keeps waiting, its cursor moved past the event.
			created := appendEvents(t, st, "intent.created")
			wake.c <- struct{}{}
			for range (n + 1) / 2 {
				r := <-results
				if r.i%2 != 0 || r.err != nil || !slices.Equal(ids(r.evs), ids(created)) {
					t.Fatalf("waiter %d: %v %v, want %v", r.i, ids(r.evs), r.err, ids(created))
				}
			}
			waitFor(t, "the filtered half still waiting", func() bool { return f.Waiting() == n/2 })
			if r := reader.reads.Load(); r != 3 {
				t.Fatalf("%d reads after the second wake-up, want 3", r)
			}
			paid = appendEvents(t, st, "intent.paid")
			wake.c <- struct{}{}
			for range n / 2 {
				r := <-results
				if r.i%2 != 1 || r.err != nil || !slices.Equal(ids(r.evs), ids(paid)) {
					t.Fatalf("filtered waiter %d: %v %v, want %v", r.i, ids(r.evs), r.err, ids(paid))
				}
			}
			if r := reader.reads.Load(); r != 4 {
				t.Fatalf("%d reads after the third wake-up, want 4", r)
			}
		})
	}
}

// Clients long-polling in a loop, some with type filters and small limits,
// one starting far behind, see exactly what the non-waiting feed returns
// while several writers append (some transactions roll back and leave
// gaps): no event lost, none twice, in seq order. The feed's window and
// batch are small so that trimming, full batches and catch-up reads happen.
func TestEventFeedMatchesFeedUnderConcurrentAppends(t *testing.T) {
	st := openStore(t)
	first := appendEvents(t, st, "intent.created")
	f := newEventFeed(st, NotifierWaker{N: st.Notifier()}, 50*time.Millisecond, 1000, 1000, slog.New(slog.DiscardHandler))
	f.batch, f.keep = 16, 40
	runFeed(t, f)

	const writers, perWriter = 4, 60
	kinds := []string{"intent.created", "intent.paid", "intent.detected"}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < perWriter; {
				k := 1 + rng.IntN(3)
				var batch []string
				for range k {
					batch = append(batch, kinds[rng.IntN(len(kinds))])
				}
				if rng.IntN(6) == 0 { // rolled back: a gap in seq
					_ = st.InTx(context.Background(), func(tx *store.Tx) error {
						if _, err := tx.AppendEvent(context.Background(), "intent.created", "", "", "", 0, time.Now()); err != nil {
							return err
						}
						return errors.New("roll back")
					})
					continue
				}
				appendEvents(t, st, batch...)
				i += k
			}
		}()
	}
	// The last event, appended once the writers are done, ends every client.
	done := make(chan struct{})
	var last atomic.Int64
	go func() {
		wg.Wait()
		last.Store(appendEvents(t, st, "intent.expired")[0].Seq)
		close(done)
	}()

	type client struct {
		types []string
		limit int
		after int64
		got   []store.Event
	}
	clients := []*client{
		{types: []string{}, limit: 100, after: first[0].Seq},
		{types: []string{}, limit: 3, after: first[0].Seq},
		{types: []string{"intent.paid", "intent.expired"}, limit: 5, after: first[0].Seq},
		{types: []string{"intent.detected", "intent.expired"}, limit: 1, after: first[0].Seq},
		{types: []string{}, limit: 7, after: 0}, // from the beginning
	}
	var cw sync.WaitGroup
	for i, c := range clients {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				evs, err := f.Wait(ctx, fmt.Sprint("key", i), "", c.after, c.types, c.limit)
				cancel()
				if err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				if len(evs) > c.limit {
					t.Errorf("client %d: %d events, limit %d", i, len(evs), c.limit)
				}
				c.got = append(c.got, evs...)
				if len(evs) > 0 {
					c.after = evs[len(evs)-1].Seq
				}
				select {
				case <-done:
					if c.after >= last.Load() {
						return
					}
				default:
				}
			}
		}()
	}
	cw.Wait()
	if t.Failed() {
		return
	}
	for i, c := range clients {
		if len(c.got) == 0 {
			t.Fatalf("client %d got nothing", i)
		}
		from := first[0].Seq
		if i == 4 {
			from = 0
		}
		want, err := st.EventsAfter(context.Background(), from, c.types, 100000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(c.got), ids(want)) {
			t.Fatalf("client %d (types %v, limit %d) saw %d events, the feed has %d:\n got %v\nwant %v",
				i, c.types, c.limit, len(c.got), len(want), ids(c.got), ids(want))
		}
	}
	t.Logf("%d events, %d clients agree with the feed", writers*perWriter+2, len(clients))
}

// The caps: beyond max per key, or max in total, Wait refuses at once;
// a request the window answers at once is not counted.
func TestEventFeedCaps(t *testing.T) {
	st := openStore(t)
	evs := appendEvents(t, st, "intent.created", "intent.paid")
	wake := &manualWaker{c: make(chan struct{})}
	f := newEventFeed(st, wake, time.Hour, 3, 2, slog.New(slog.DiscardHandler))
	runFeed(t, f)
	head := evs[1].Seq
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wait := func(key string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = f.Wait(ctx, key, "", head, nil, 10)
		}()
	}
	wait("a")
	wait("a")
	waitFor(t, "two waiters and the head known", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.waiters) == 2 && f.known
	})
	if _, err := f.Wait(ctx, "a", "", head, nil, 10); !errors.Is(err, errTooManyWaiters) {
		t.Fatalf("third waiter of key a: %v, want errTooManyWaiters", err)
	}
	// Answered from the window: no slot needed.
	if got, err := f.Wait(ctx, "a", "", evs[0].Seq, nil, 10); err != nil || len(got) != 1 || got[0].ID != evs[1].ID {
		t.Fatalf("catching-up request of key a: %v %v", ids(got), err)
	}
	wait("b")
	waitFor(t, "three waiters", func() bool { return f.Waiting() == 3 })
	if _, err := f.Wait(ctx, "c", "", head, nil, 10); !errors.Is(err, errTooManyWaiters) {
		t.Fatalf("fourth waiter in total: %v, want errTooManyWaiters", err)
	}
	cancel()
	wg.Wait()
	if n := f.Waiting(); n != 0 {
		t.Fatalf("%d waiters left after their requests ended", n)
	}
}
