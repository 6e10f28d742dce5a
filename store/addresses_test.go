package store_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// TestAddressCountsFollowInsertsAndDeletes: the kept count equals count(*)
// after new rows, rows already there (ON CONFLICT DO NOTHING) and a delete,
// and WatchedKeys streams every key with the newest creation time. The rows
// are committed (the count is read outside any transaction), on a network
// name no other test uses.
func TestAddressCountsFollowInsertsAndDeletes(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	network := fmt.Sprintf("counts-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		_, _ = s.Pool().Exec(context.Background(), `DELETE FROM addresses WHERE network = $1`, network)
	})
	addr := func(i int, at time.Time) store.Address {
		return store.Address{Network: network, Key: bytes.Repeat([]byte{byte(i)}, 22), Address: fmt.Sprintf("a%d", i),
			Source: "pool", Index: -1, CreatedAt: at}
	}
	insert := func(as ...store.Address) {
		t.Helper()
		if err := s.InTx(ctx, func(tx *store.Tx) error { _, err := tx.AddAddresses(ctx, as); return err }); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want int64) {
		t.Helper()
		got, err := s.CountAddresses(ctx, network)
		if err != nil {
			t.Fatal(err)
		}
		var counted int64
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM addresses WHERE network = $1`, network).Scan(&counted); err != nil {
			t.Fatal(err)
		}
		if got != want || counted != want {
			t.Fatalf("CountAddresses = %d, count(*) = %d, want %d", got, counted, want)
		}
	}
	check(0)
	insert(addr(0, now), addr(1, now), addr(2, now.Add(time.Second)))
	check(3)
	insert(addr(2, now), addr(3, now.Add(2*time.Second)))
	check(4)
	if _, err := s.Pool().Exec(ctx, `DELETE FROM addresses WHERE network = $1 AND address = 'a0'`, network); err != nil {
		t.Fatal(err)
	}
	check(3)

	var maxSeq, seqOf2 int64
	if err := s.Pool().QueryRow(ctx, `SELECT max(seq), max(seq) FILTER (WHERE address = 'a2') FROM addresses WHERE network = $1`, network).Scan(&maxSeq, &seqOf2); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	last, err := s.WatchedKeysSince(ctx, network, 0, func(k []byte) { got = append(got, bytes.Clone(k)) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || last != maxSeq {
		t.Fatalf("WatchedKeysSince: %d keys, last seq %d; want 3, %d", len(got), last, maxSeq)
	}
	seen := map[byte]bool{}
	for _, k := range got {
		if len(k) != 22 || !bytes.Equal(k, bytes.Repeat(k[:1], 22)) {
			t.Fatalf("WatchedKeysSince handed a damaged key %x", k)
		}
		seen[k[0]] = true
	}
	if !seen[1] || !seen[2] || !seen[3] {
		t.Fatalf("WatchedKeysSince keys %x, want 1, 2 and 3", got)
	}
	later, err := s.WatchedKeysSince(ctx, network, seqOf2, func(k []byte) {
		if k[0] != 3 {
			t.Errorf("key %x is not after the given seq", k)
		}
	})
	if err != nil || later != maxSeq {
		t.Fatalf("WatchedKeysSince after: last %d, %v", later, err)
	}
}

// TestAddressSeqIsCommitOrder: a second writer of addresses waits for the
// first one's commit before it draws a seq (the lock comes before the
// sequence, once per statement), so a reader that follows seq never sees a
// larger seq committed while a smaller one is still to come.
func TestAddressSeqIsCommitOrder(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	network := fmt.Sprintf("seq-order-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		_, _ = s.Pool().Exec(context.Background(), `DELETE FROM addresses WHERE network = $1`, network)
	})
	addr := func(i int) []store.Address {
		return []store.Address{{Network: network, Key: bytes.Repeat([]byte{byte(i)}, 22), Address: fmt.Sprintf("a%d", i),
			Source: "pool", Index: -1, CreatedAt: now}}
	}
	first, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx)
	if _, err := first.AddAddresses(ctx, addr(1)); err != nil {
		t.Fatal(err)
	}
	var drawn int64
	if err := s.Pool().QueryRow(ctx, `SELECT last_value FROM addresses_seq`).Scan(&drawn); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- s.InTx(ctx, func(tx *store.Tx) error { _, err := tx.AddAddresses(ctx, addr(2)); return err })
	}()
	// Wait until the second writer waits for the lock of this database.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting bool
		if err := s.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
			WHERE d.datname = current_database() AND l.locktype = 'advisory' AND l.objid = 7303203 AND NOT l.granted)`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-second:
			t.Fatalf("the second writer finished (%v) while the first one's seq was not committed", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the second writer never waited for the address seq lock")
		}
	}
	var last int64
	if err := s.Pool().QueryRow(ctx, `SELECT last_value FROM addresses_seq`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if last != drawn {
		t.Fatalf("the waiting writer drew seq %d before the lock (first writer drew %d)", last, drawn)
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	var seq1, seq2 int64
	if err := s.Pool().QueryRow(ctx, `SELECT max(seq) FILTER (WHERE address = 'a1'), max(seq) FILTER (WHERE address = 'a2')
		FROM addresses WHERE network = $1`, network).Scan(&seq1, &seq2); err != nil {
		t.Fatal(err)
	}
	if !(seq1 < seq2) {
		t.Fatalf("seq %d committed first, %d after it: want increasing", seq1, seq2)
	}
}
