package store_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/store"
)

// Migration 0025 moved Ethereum token transfers stored under their block
// log index to idx + LegacyIndexBase. The first upsert of the transaction
// under its tx-local key re-keys such a row in place (same id, first-seen
// time, record order): one transfer, not two; the lowest legacy index of
// the transaction, asset and address takes the first tx-local key.
func TestLegacyTokenKeyIsRekeyedInPlace(t *testing.T) {
	tx, ctx := inTx(t)
	h := int64(100)
	legacy := func(id string, blockLog int64, amount int64) store.Transfer {
		return store.Transfer{ID: id, Network: "ethereum", TxID: "0xaa", Index: store.LegacyIndexBase + blockLog, Asset: "USDT",
			Address: "0xA", AddressKey: []byte("A"), Amount: big.NewInt(amount), BlockHeight: &h, BlockHash: "0xb1", FirstSeenAt: now,
			Status: "confirmed", ConfirmationsRequired: 2, Classification: "unknown_address", CreatedAt: now}
	}
	var olds []store.Transfer
	for _, l := range []store.Transfer{legacy("tr_l7", 7, 5), legacy("tr_l9", 9, 6)} {
		s, inserted, err := tx.UpsertTransfer(ctx, l)
		if err != nil || !inserted {
			t.Fatalf("legacy row: %v %v", inserted, err)
		}
		olds = append(olds, s)
	}
	h2 := int64(101)
	for k, old := range olds {
		seen := legacy("tr_new", 0, old.Amount.Int64())
		seen.Index, seen.BlockHeight, seen.BlockHash, seen.Status, seen.FirstSeenAt = int64(k), &h2, "0xb2", "confirming", now.Add(3600e9)
		got, inserted, err := tx.UpsertTransfer(ctx, seen)
		if err != nil || inserted {
			t.Fatalf("re-mined log %d: inserted %v, %v", k, inserted, err)
		}
		if got.ID != old.ID || got.Index != int64(k) || !got.FirstSeenAt.Equal(now) || got.Recorded != old.Recorded || *got.BlockHeight != 101 || got.Reexecuted {
			t.Fatalf("re-mined log %d: %s idx %d first seen %s recorded %d re-executed %v; want %s idx %d first seen %s recorded %d",
				k, got.ID, got.Index, got.FirstSeenAt, got.Recorded, got.Reexecuted, old.ID, k, now, old.Recorded)
		}
	}
	for _, l := range []int64{7, 9} {
		if _, err := tx.TransferByKey(ctx, "ethereum", "0xaa", store.LegacyIndexBase+l); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("legacy key %d still stored: %v", l, err)
		}
	}
}

// A transaction seen again with another amount and address (re-executed)
// keeps its row and takes the new content; the old is in transfer_contents.
func TestReexecutedTransferTakesTheNewContent(t *testing.T) {
	tx, ctx := inTx(t)
	h := int64(100)
	tr := store.Transfer{ID: "tr_x", Network: "ethereum", TxID: "0xcc", Index: -2, Asset: "native", Address: "0xA", AddressKey: []byte("A"),
		Amount: big.NewInt(40), BlockHeight: &h, BlockHash: "0xb1", FirstSeenAt: now, Status: "confirming", ConfirmationsRequired: 2,
		Classification: "unknown_address", CreatedAt: now}
	first, _, err := tx.UpsertTransfer(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	same, _, err := tx.UpsertTransfer(ctx, tr)
	if err != nil || same.Reexecuted {
		t.Fatalf("the same content again: re-executed %v, %v", same.Reexecuted, err)
	}
	h2 := int64(101)
	tr.ID, tr.Amount, tr.Address, tr.AddressKey, tr.BlockHeight, tr.BlockHash = "tr_y", big.NewInt(24), "0xB", []byte("B"), &h2, "0xb2"
	got, inserted, err := tx.UpsertTransfer(ctx, tr)
	if err != nil || inserted || !got.Reexecuted || got.ID != first.ID || got.Amount.Int64() != 24 || got.Address != "0xB" {
		t.Fatalf("re-executed: inserted %v re-executed %v %s %s %s (%v)", inserted, got.Reexecuted, got.ID, got.Amount, got.Address, err)
	}
	was, err := tx.ReplacedContent(ctx, got.ID)
	if err != nil || was.Amount.Int64() != 40 || was.Address != "0xA" {
		t.Fatalf("replaced content %+v (%v), want 40 to 0xA", was, err)
	}
}
