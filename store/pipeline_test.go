package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// eventsOf returns the types of the stored events of an intent.
func eventsOf(t *testing.T, s *store.Store, intentID string) []string {
	t.Helper()
	evs, err := s.EventsAfter(context.Background(), 0, nil, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.IntentID == intentID {
			out = append(out, string(e.Type))
		}
	}
	return out
}

func TestQueuedStatementsAreCommitted(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	id, addr := store.NewID("pi"), store.NewID("addr")
	err := s.InTx(ctx, func(tx *store.Tx) error {
		p := payable(t, tx, ctx, "order", store.NewID("ORD"))
		tx.QueueInsertIntent(intent(p, id, addr))
		return tx.QueueAppendEvent("intent.created", id, "", "", map[string]string{"id": id}, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	if in, err := s.GetIntent(ctx, id); err != nil || in.Address != addr {
		t.Fatalf("queued intent after commit: %+v, %v", in, err)
	}
	if got := eventsOf(t, s, id); len(got) != 1 || got[0] != "intent.created" {
		t.Fatalf("queued event after commit: %v", got)
	}

	// A queued statement that fails fails the commit, and nothing of the
	// transaction stays.
	id2 := store.NewID("pi")
	err = s.InTx(ctx, func(tx *store.Tx) error {
		p := payable(t, tx, ctx, "order", store.NewID("ORD"))
		tx.QueueInsertIntent(intent(p, id2, addr)) // address taken by id
		return tx.QueueAppendEvent("intent.created", id2, "", "", map[string]string{"id": id2}, now)
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit with a conflicting queued insert: %v, want ErrConflict", err)
	}
	if _, err := s.GetIntent(ctx, id2); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("intent of a failed commit: %v, want ErrNotFound", err)
	}
	if got := eventsOf(t, s, id2); len(got) != 0 {
		t.Fatalf("events of a failed commit: %v", got)
	}
}

func TestQueuedStatementFailureIsReportedByNextStatement(t *testing.T) {
	tx, ctx := inTx(t)
	p := payable(t, tx, ctx, "order", "ORD-Q1")
	if err := tx.InsertIntent(ctx, intent(p, "pi_q1", "addr-q")); err != nil {
		t.Fatal(err)
	}
	tx.QueueInsertIntent(intent(p, "pi_q2", "addr-q"))
	if _, err := tx.GetIntent(ctx, "pi_q1"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("statement after a conflicting queued insert: %v, want ErrConflict", err)
	}
}

func TestQueuedStatementsKeepTheirOrder(t *testing.T) {
	tx, ctx := inTx(t)
	p := payable(t, tx, ctx, "order", "ORD-Q2")
	if err := tx.InsertIntent(ctx, intent(p, "pi_q4", "addr-q4")); err != nil {
		t.Fatal(err)
	}
	tx.QueueInsertIntent(intent(p, "pi_q3", "addr-q3"))
	// Supersede references the queued intent (a foreign key): the queued
	// insert must reach the database first.
	if err := tx.Supersede(ctx, "pi_q4", "pi_q3", now); err != nil {
		t.Fatal(err)
	}
	in, err := tx.GetIntent(ctx, "pi_q4")
	if err != nil || in.SupersededBy != "pi_q3" {
		t.Fatalf("superseded by queued intent: %+v, %v", in, err)
	}
}

func TestEnsurePayableTakeDerived(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	network, source := store.NewID("net"), "fp-test"
	rows := []store.Address{
		{Network: network, Key: []byte("k0"), Address: "a0", Source: source, Index: 0, CreatedAt: now},
		{Network: network, Key: []byte("k1"), Address: "a1", Source: source, Index: 1, CreatedAt: now},
	}
	err := s.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.AddAddresses(ctx, rows)
		if err == nil && n != 2 {
			t.Errorf("added %d of 2 new addresses", n)
		}
		// Existing rows and repeats within one call are left alone.
		n, err2 := tx.AddAddresses(ctx, append(rows[:1:1], rows[0]))
		if err2 == nil && n != 0 {
			t.Errorf("added %d already stored addresses", n)
		}
		return errors.Join(err, err2)
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := store.NewID("ORD")
	want := store.Payable{Kind: "order", Reference: ref, AmountCents: 10000, CreatedAt: now}

	// A rolled-back take frees the address again.
	for range 2 {
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, a, open, err := tx.EnsurePayableTakeDerived(ctx, want, network, source, "BTC", "pi_t0", now, 1)
		if err != nil || a == nil || len(open) != 0 || a.Index != 0 || a.IntentID != "pi_t0" || p.Reference != ref {
			t.Fatalf("take: %+v %+v %v", p, a, err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var ids []string
	for i := range 3 {
		err := s.InTx(ctx, func(tx *store.Tx) error {
			id := store.NewID("pi")
			// No intent is inserted: the payable has none open.
			_, a, _, err := tx.EnsurePayableTakeDerived(ctx, want, network, source, "BTC", id, now, 1)
			if err != nil {
				return err
			}
			if i < 2 && (a == nil || a.Index != int64(i) || a.IntentID != id) {
				t.Errorf("take %d: %+v", i, a)
			}
			if i == 2 && a != nil {
				t.Errorf("take with none free: %+v, want nil", a)
			}
			if a != nil {
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("intents: %v", ids)
	}
	if free, err := s.FreeDerived(ctx, network, source); err != nil || free != 0 {
		t.Fatalf("free after taking both: %d, %v", free, err)
	}
}

// A creation takes no address for a payable with an open intent of its
// method, or with as many open intents as the cap: it answers the open
// intent or refuses, and commits, so a taken address would be lost.
func TestEnsurePayableTakeDerivedTakesNothingForAnOpenPayable(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	network, source := store.NewID("net"), "fp-test"
	err := s.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.AddAddresses(ctx, []store.Address{
			{Network: network, Key: []byte("k0"), Address: "a0", Source: source, Index: 0, CreatedAt: now},
			{Network: network, Key: []byte("k1"), Address: "a1", Source: source, Index: 1, CreatedAt: now},
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Payable{Kind: "order", Reference: store.NewID("ORD"), AmountCents: 10000, CreatedAt: now}
	btc := "pi_" + store.NewID("open")
	err = s.InTx(ctx, func(tx *store.Tx) error {
		p, err := tx.EnsurePayable(ctx, want)
		if err != nil {
			return err
		}
		tx.QueueInsertIntent(intent(p, btc, "addr-"+btc)) // BTC, awaiting until now+30m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		method string
		at     time.Time
		cap    int
		take   bool
		open   int
	}{
		{"same method open", "BTC", now.Add(time.Minute), 0, false, 1},
		{"another method at the cap", "LTC", now.Add(time.Minute), 1, false, 1},
		{"another method under the cap", "LTC", now.Add(time.Minute), 2, true, 1},
		{"another method, no cap", "LTC", now.Add(time.Minute), 0, true, 1},
		{"same method past its deadline", "BTC", now.Add(31 * time.Minute), 1, true, 0},
	} {
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, a, open, err := tx.EnsurePayableTakeDerived(ctx, want, network, source, tc.method, "pi_x", tc.at, tc.cap)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (a != nil) != tc.take || len(open) != tc.open || (tc.open == 1 && (open[0].ID != btc || open[0].Method != "BTC")) {
			t.Errorf("%s: took %+v, open %+v; want take %v, %d open", tc.name, a, open, tc.take, tc.open)
		}
		got, err := tx.OpenIntents(ctx, "", string(want.Kind), want.Reference, tc.at)
		if err != nil || len(got) != tc.open {
			t.Errorf("%s: OpenIntents %+v %v, want %d", tc.name, got, err, tc.open)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEmptyTransactionCommits(t *testing.T) {
	s := open(t)
	ran := false
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		tx.AfterCommit(func() { ran = true })
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("empty transaction: %v, after-commit ran %v", err, ran)
	}
}

// TestQueuedEventWaitsForCommitNotTheNextStatement: work done after an
// event is queued does not hold the global event lock, so another
// transaction appends its event meanwhile; the queued event is appended
// with COMMIT.
func TestQueuedEventWaitsForCommitNotTheNextStatement(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	id := store.NewID("pi")
	err := s.InTx(ctx, func(tx *store.Tx) error {
		p := payable(t, tx, ctx, "order", store.NewID("ORD"))
		tx.QueueInsertIntent(intent(p, id, store.NewID("addr")))
		if err := tx.QueueAppendEvent("intent.created", id, "", "", map[string]string{"id": id}, now); err != nil {
			return err
		}
		// Later work in the same transaction …
		if _, err := tx.PayableForUpdate(ctx, p.ID); err != nil {
			return err
		}
		// … while another transaction appends an event: it must not wait.
		other, err := s.Pool().Begin(ctx)
		if err != nil {
			return err
		}
		defer other.Rollback(ctx)
		if _, err := other.Exec(ctx, `SET LOCAL lock_timeout = '500ms'`); err != nil {
			return err
		}
		if _, err := other.Exec(ctx, `SELECT paywatch_append_event($1, 'intent.created', '', '', '', '{}', $2)`, store.NewID("ev"), now); err != nil {
			t.Errorf("another transaction's event waited for the event lock: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventsOf(t, s, id); len(got) != 1 || got[0] != "intent.created" {
		t.Fatalf("queued event after commit: %v", got)
	}
}

// A taken derived address tells how many indexes are derived above it, so
// the taker replenishes without counting the free ones.
func TestTakeDerivedReportsIndexesAhead(t *testing.T) {
	tx, ctx := inTx(t)
	network, source := store.NewID("net"), "fp-ahead"
	first, err := tx.ReserveIndexes(ctx, network, source, 5)
	if err != nil || first != 0 {
		t.Fatalf("reserve: %d, %v", first, err)
	}
	var rows []store.Address
	for i := range int64(5) {
		rows = append(rows, store.Address{Network: network, Key: []byte{byte(i)}, Address: fmt.Sprint("a", i), Source: source, Index: i, CreatedAt: now})
	}
	if _, err := tx.AddAddresses(ctx, rows); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{4, 3, 2} {
		a, err := tx.TakeDerivedAddress(ctx, network, source, store.NewID("pi"))
		if err != nil || a.Index != int64(i) || a.Ahead != want {
			t.Fatalf("take %d: index %d ahead %d (%v), want index %d ahead %d", i, a.Index, a.Ahead, err, i, want)
		}
	}
}

// InTx runs at most ActiveTransactions transactions at once; a caller
// waiting for a turn gives up with its context, having run nothing.
func TestInTxTakesTurns(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	const callers = 3 * store.ActiveTransactions
	var mu sync.Mutex
	inside, most, ran := 0, 0, 0
	full := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.InTx(ctx, func(tx *store.Tx) error {
				mu.Lock()
				inside++
				ran++
				most = max(most, inside)
				if inside == store.ActiveTransactions && ran == store.ActiveTransactions {
					close(full)
				}
				mu.Unlock()
				<-release
				mu.Lock()
				inside--
				mu.Unlock()
				return nil
			})
		}()
	}
	<-full // every turn is taken and the holders wait for release
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	called := false
	if err := s.InTx(cancelled, func(*store.Tx) error { called = true; return nil }); !errors.Is(err, context.Canceled) || called {
		t.Fatalf("waiting with a cancelled context: %v (fn called %v), want context.Canceled before fn", err, called)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if most != store.ActiveTransactions || ran != callers {
		t.Fatalf("%d transactions at once (want %d), %d of %d ran", most, store.ActiveTransactions, ran, callers)
	}
}
