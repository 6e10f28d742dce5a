package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// TestQueuedEventsKeepTheirOrderTypesAndTimes: the events a transaction
// queues one after the other go in one statement at commit (migration
// 0038); each keeps its type, account, body and time, and they get seqs in
// call order, also around a store event and a batch queued between them.
func TestQueuedEventsKeepTheirOrderTypesAndTimes(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	type want struct {
		typ     payment.EventType
		account string
		n       int
		at      time.Time
	}
	wants := []want{
		{payment.EventLedgerCredited, "acct-1", 1, t0},
		{payment.EventLedgerReversed, "acct-2", 2, t0.Add(time.Second)},
		{payment.EventLedgerCredited, "acct-3", 3, t0.Add(2 * time.Second)}, // a store event
		{payment.EventLedgerRecovered, "acct-4", 4, t0.Add(3 * time.Second)},
		{payment.EventLedgerCredited, "acct-5", 5, t0.Add(4 * time.Second)}, // a batch
		{payment.EventLedgerReversed, "acct-6", 6, t0.Add(5 * time.Second)},
		{payment.EventLedgerCredited, "acct-7", 7, t0.Add(6 * time.Second)},
	}
	err := s.InTx(ctx, func(tx *store.Tx) error {
		for _, w := range wants {
			body := map[string]int{"n": w.n}
			var err error
			switch w.n {
			case 3:
				err = tx.QueueAppendStoreEvent("", w.typ, w.account, body, w.at)
			case 5:
				err = tx.QueueAppendEvents(w.typ, []store.NewEvent{{Account: w.account, Data: body}}, w.at)
			default:
				err = tx.QueueAppendEvent(w.typ, "", "", w.account, body, w.at)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.EventsAfter(ctx, 0, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(wants) {
		t.Fatalf("%d events, want %d", len(evs), len(wants))
	}
	for i, e := range evs {
		w := wants[i]
		var body map[string]int
		if err := json.Unmarshal(e.Data, &body); err != nil {
			t.Fatal(err)
		}
		if e.Type != w.typ || e.Account != w.account || body["n"] != w.n || !e.CreatedAt.Equal(w.at) {
			t.Errorf("event %d is %s %s n=%d at %s, want %s %s n=%d at %s", i, e.Type, e.Account, body["n"], e.CreatedAt, w.typ, w.account, w.n, w.at)
		}
		if i > 0 && e.Seq != evs[i-1].Seq+1 {
			t.Errorf("event %d has seq %d after %d: not consecutive", i, e.Seq, evs[i-1].Seq)
		}
	}
}
