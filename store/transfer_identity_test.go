package store_test

import (
	"context"
	"errors"
	"fmt"
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
	// The same content again at the same time (a rescan before the clock
	// moved): not a re-execution.
	again, _, err := tx.UpsertTransfer(ctx, tr)
	if err != nil || again.Reexecuted || again.Amount.Int64() != 24 {
		t.Fatalf("the new content again: re-executed %v amount %s (%v)", again.Reexecuted, again.Amount, err)
	}
}

// Migration 0025 moves the Ethereum token transfers stored under their
// block log index out of the way (idx + LegacyIndexBase) and leaves every
// other transfer's key as it was.
func TestTransferIdentityMigrationMovesBlockLogKeys(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var sql string
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version == 25 {
			sql = m.SQL
		}
	}
	if sql == "" {
		t.Fatal("no migration 25")
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The schema as it was before 0025.
	if _, err := tx.Exec(ctx, `DROP TRIGGER transfers_contents ON transfers; DROP FUNCTION paywatch_transfer_contents();
		DROP TABLE transfer_contents; DROP INDEX transfers_legacy_key; ALTER TABLE transfers DROP COLUMN reexecuted_at`); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		network, txid, asset string
		idx, want            int64
	}{
		{"ethereum", "0xm1", "USDT", 583, store.LegacyIndexBase + 583},
		{"ethereum", "0xm2", "USDC", 0, store.LegacyIndexBase},
		{"ethereum", "0xm3", "native", -1, -1},
		{"ethereum", "0xm4", "native", -3, -3},
		{"tron", "m5", "USDT", 2, 2},
		{"bitcoin", "m6", "native", 1, 1},
	}
	for i, r := range rows {
		if _, err := tx.Exec(ctx, `INSERT INTO transfers (id, network, txid, idx, asset, address, address_key, amount, first_seen_at, status,
			confirmations_required, classification, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'a', 'a', 1, $6, 'pending', 1, 'unknown_address', $6, $6)`,
			fmt.Sprintf("tr_m%d", i), r.network, r.txid, r.idx, r.asset, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		var got int64
		if err := tx.QueryRow(ctx, `SELECT idx FROM transfers WHERE id = $1`, fmt.Sprintf("tr_m%d", i)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != r.want {
			t.Errorf("%s %s %s idx %d: %d after 0025, want %d", r.network, r.txid, r.asset, r.idx, got, r.want)
		}
	}
}
