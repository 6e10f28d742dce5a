package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// TestOnCommitSaysWhetherEventsWereAppended: the simulator reads the
// events after a commit only when OnCommit says the transaction appended
// one, so every way of appending an event must say so, and a transaction
// without one must not.
func TestOnCommitSaysWhetherEventsWereAppended(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var got []bool
	s.OnCommit(func(events bool) {
		mu.Lock()
		got = append(got, events)
		mu.Unlock()
	})
	defer s.OnCommit(nil)
	cases := []struct {
		name string
		fn   func(*store.Tx) error
		want bool
	}{
		{"no event", func(tx *store.Tx) error {
			return tx.PutBlock(ctx, "bitcoin", store.BlockRef{Height: 1, Hash: "h1", Parent: "h0"}, now)
		}, false},
		{"AppendEvent", func(tx *store.Tx) error {
			_, err := tx.AppendEvent(ctx, payment.EventLedgerCredited, "", "", "acct-1", map[string]int{"n": 1}, now)
			return err
		}, true},
		{"QueueAppendEvent", func(tx *store.Tx) error {
			return tx.QueueAppendEvent(payment.EventLedgerCredited, "", "", "acct-1", map[string]int{"n": 2}, now)
		}, true},
		{"QueueAppendEvents", func(tx *store.Tx) error {
			return tx.QueueAppendEvents(payment.EventLedgerCredited, []store.NewEvent{{Account: "acct-1", Data: map[string]int{"n": 3}}}, now)
		}, true},
	}
	for _, c := range cases {
		got = nil
		if err := s.InTx(ctx, c.fn); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s through InTx: OnCommit got %v, want [%v]", c.name, got, c.want)
		}
		got = nil
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.fn(tx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("%s: commit: %v", c.name, err)
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s through Begin and Commit: OnCommit got %v, want [%v]", c.name, got, c.want)
		}
	}
}
