package store_test

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// TestQueuedTransferDecisionsWriteWhatSetDecisionAndSetNotifiedWrote: a
// decision's transfers are written in one statement; each row ends as
// SetDecision then SetNotified left it (updated_at moves only when the
// class or settled part changed).
func TestQueuedTransferDecisionsWriteWhatSetDecisionAndSetNotifiedWrote(t *testing.T) {
	tx, ctx := inTx(t)
	later := now.Add(time.Minute)
	cases := []store.TransferDecision{
		{Class: payment.Overpaid, Settled: big.NewInt(4), Decide: true, Notify: true},
		{Class: payment.Settles, Settled: big.NewInt(5), Decide: true},
		{Class: payment.Partial, Settled: big.NewInt(0), Decide: true, Notify: true}, // as stored already
		{Class: payment.Partial, Settled: big.NewInt(0), Notify: true},
		{Class: payment.Late, Settled: big.NewInt(2), Decide: true},
	}
	var queued []store.TransferDecision
	for i, c := range cases {
		for _, path := range []string{"old", "new"} {
			id := fmt.Sprintf("tr_%s_%d", path, i)
			if _, _, err := tx.UpsertTransfer(ctx, store.Transfer{ID: id, Network: "bitcoin", TxID: id, Index: 0, Asset: "native",
				Address: "a", AddressKey: []byte("a"), Amount: big.NewInt(5), FirstSeenAt: now, Status: "pending",
				ConfirmationsRequired: 2, Classification: payment.Partial, CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
			if path == "old" {
				if c.Decide {
					if err := tx.SetDecision(ctx, id, c.Class, c.Settled, later); err != nil {
						t.Fatal(err)
					}
				}
				if c.Notify {
					if err := tx.SetNotified(ctx, id, c.Class); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			c.ID = id
			queued = append(queued, c)
		}
	}
	tx.QueueTransferDecisions(queued, later)
	for i := range cases {
		old, err := tx.GetTransfer(ctx, fmt.Sprintf("tr_old_%d", i))
		if err != nil {
			t.Fatal(err)
		}
		got, err := tx.GetTransfer(ctx, fmt.Sprintf("tr_new_%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if got.Classification != old.Classification || got.Settled.Cmp(old.Settled) != 0 || got.NotifiedClass != old.NotifiedClass ||
			!got.UpdatedAt.Equal(old.UpdatedAt) {
			t.Errorf("case %d: %s settled %s notified %q updated %s, want %s settled %s notified %q updated %s", i,
				got.Classification, got.Settled, got.NotifiedClass, got.UpdatedAt, old.Classification, old.Settled, old.NotifiedClass, old.UpdatedAt)
		}
	}
}
