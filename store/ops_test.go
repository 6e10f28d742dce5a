package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// The operations figures (webhook outbox, inbox, unrecovered, open
// intents, events by type) are read from the database as they stand.
func TestOperationsReadTheOutboxAndTheEvents(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	if err := s.EnsureWebhookEndpoint(ctx, "shop", "http://127.0.0.1:1/hook", "", false, now); err != nil {
		t.Fatal(err)
	}
	before, err := s.LastEventSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, typ := range []payment.EventType{payment.EventLedgerDebited, payment.EventLedgerDebited, payment.EventTransferUnmatched} {
		err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.AppendEvent(ctx, typ, "", "", "", map[string]int{"i": i}, now.Add(time.Duration(i)*time.Minute))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ops, err := s.Operations(ctx, []string{"shop", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops.Outboxes) != 1 || ops.Outboxes[0].Endpoint != "shop" || ops.Outboxes[0].Pending != 3 ||
		ops.Outboxes[0].OldestAt == nil || !ops.Outboxes[0].OldestAt.Equal(now) {
		t.Fatalf("outboxes %+v", ops.Outboxes)
	}
	if ops.InboxUnresolved != 0 || ops.InboxOldestAt != nil || ops.UnrecoveredCents != 0 ||
		ops.OpenIntents["awaiting_payment"] != 0 || ops.OpenIntents["detected"] != 0 {
		t.Fatalf("ops %+v", ops)
	}
	counts, last, err := s.EventCountsAfter(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if counts[string(payment.EventLedgerDebited)] != 2 || counts[string(payment.EventTransferUnmatched)] != 1 || last != before+3 {
		t.Fatalf("counts %v last %d (before %d)", counts, last, before)
	}
	if counts, last2, err := s.EventCountsAfter(ctx, last); err != nil || len(counts) != 0 || last2 != last {
		t.Fatalf("nothing new: %v %d %v", counts, last2, err)
	}
}
