package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/store"
)

// A fenced transaction of a held lease gets the fence's idle timeout for
// the transaction only (none with a zero Idle), and holds the lease row FOR
// KEY SHARE; a fence of a lost lease fails with PW001 and leaves the
// session's timeout. The fence is one statement (migration 0037); what it
// leaves is what migration 0026's left (issue 37 item 3).
func TestTheFenceSetsTheIdleTimeoutOfAHeldLeaseOnly(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	l, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "a", TTL: time.Hour, Clock: clock.NewFake(now)})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	defer l.Release()
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	show := func(tx pgx.Tx) string {
		t.Helper()
		var v string
		if err := tx.QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var session string
	if err := conn.QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&session); err != nil {
		t.Fatal(err)
	}
	fence := func(token, idleMS int64) (timeout string, locked bool, err error) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, `SELECT paywatch_fence($1, $2, $3)`, "scanner.bitcoin", token, idleMS); err != nil {
			return "", false, err
		}
		// The row lock: a takeover's FOR UPDATE from another session waits.
		other, err := s.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = other.Rollback(ctx) }()
		_, lerr := other.Exec(ctx, `SELECT 1 FROM leases WHERE name = 'scanner.bitcoin' FOR UPDATE NOWAIT`)
		var pgErr *pgconn.PgError
		locked = errors.As(lerr, &pgErr) && pgErr.Code == "55P03"
		return show(tx), locked, nil
	}
	if got, locked, err := fence(l.Token(), 1234); err != nil || got != "1234ms" || !locked {
		t.Fatalf("held lease, idle 1234 ms: timeout %q locked %v err %v, want 1234ms and the row locked", got, locked, err)
	}
	if got, locked, err := fence(l.Token(), 0); err != nil || got != session || !locked {
		t.Fatalf("held lease, no idle: timeout %q locked %v err %v, want the session's %q and the row locked", got, locked, err, session)
	}
	_, _, err = fence(l.Token()+1, 1234)
	if !store.IsFenced(err) {
		t.Fatalf("a stale token: %v, want PW001", err)
	}
	if err := conn.QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&session); err != nil || session == "1234ms" {
		t.Fatalf("after a failed fence the session's timeout is %q (%v)", session, err)
	}
}

// The scanner's cursor lock made first in a fenced transaction checks the
// fence in the same statement (one statement fewer) and answers as the
// separate check did: a held lease reads and locks the cursor and holds
// the lease row; a stale fence fails with ErrFenced whether or not the
// network has a cursor (the check is then made on its own), and a held
// one without a cursor is ErrNotFound; the same for a block batch
// (issue 37 item 3).
func TestACursorLockChecksTheFenceAsTheCheckDidAlone(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	a, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "a", TTL: time.Hour, Clock: clock.NewFake(now)})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	defer a.Release()
	if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InitCursor(ctx, "bitcoin", 10, "h10", now) }); err != nil {
		t.Fatal(err)
	}
	leaseLocked := func() bool {
		t.Helper()
		other, err := s.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = other.Rollback(ctx) }()
		_, lerr := other.Exec(ctx, `SELECT 1 FROM leases WHERE name = 'scanner.bitcoin' FOR UPDATE NOWAIT`)
		var pgErr *pgconn.PgError
		return errors.As(lerr, &pgErr) && pgErr.Code == "55P03"
	}
	lock := func(f *store.Fence, network string) (c store.Cursor, locked bool, err error) {
		err = s.InTx(ctx, func(tx *store.Tx) error {
			tx.Fence(f)
			var err error
			if c, err = tx.CursorForUpdate(ctx, network); err != nil {
				return err
			}
			locked = leaseLocked()
			return nil
		})
		return c, locked, err
	}
	batch := func(f *store.Fence, network string) error {
		return s.InTx(ctx, func(tx *store.Tx) error {
			tx.Fence(f)
			_, _, err := tx.StartBlocks(ctx, network, 12, 0, []store.BlockRef{{Height: 11, Hash: "h11", Parent: "h10"}},
				[]time.Time{now}, 0, now)
			return err
		})
	}
	if c, locked, err := lock(a.Fence(), "bitcoin"); err != nil || c.Height != 10 || c.Hash != "h10" || !locked {
		t.Fatalf("held lease: cursor %+v, lease row locked %v, %v", c, locked, err)
	}
	if _, _, err := lock(a.Fence(), "litecoin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("held lease, no cursor: %v, want ErrNotFound", err)
	}
	if err := batch(a.Fence(), "litecoin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("held lease, no cursor, a batch: %v, want ErrNotFound", err)
	}

	if _, err := s.Pool().Exec(ctx, `UPDATE leases SET expires_at = '-infinity' WHERE name = 'scanner.bitcoin'`); err != nil {
		t.Fatal(err)
	}
	b, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "b", TTL: time.Hour, Clock: clock.NewFake(now)})
	if err != nil || !ok {
		t.Fatalf("takeover: %v %v", ok, err)
	}
	defer b.Release()
	for _, n := range []string{"bitcoin", "litecoin"} {
		if _, _, err := lock(a.Fence(), n); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("stale fence, %s cursor lock: %v, want ErrFenced", n, err)
		}
		if err := batch(a.Fence(), n); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("stale fence, %s batch: %v, want ErrFenced", n, err)
		}
	}
	if c, err := s.GetCursor(ctx, "bitcoin"); err != nil || c.Height != 10 || c.NodeHeight != 0 {
		t.Fatalf("after the stale fence's batch: %+v %v", c, err)
	}
	if err := batch(b.Fence(), "bitcoin"); err != nil {
		t.Fatalf("the new leader's batch: %v", err)
	}
	if c, err := s.GetCursor(ctx, "bitcoin"); err != nil || c.Height != 11 || c.NodeHeight != 12 {
		t.Fatalf("after the new leader's batch: %+v %v", c, err)
	}
}

// The cursor writes a scanner sends with its commit (a fresh cursor and
// its block ref, a rescan's reset, a reorg's rewind) are made under the
// transaction's fence as when each was sent on its own: written with a
// held lease, nothing written and ErrFenced with a stale one (issue 37
// item 3).
func TestQueuedCursorWritesAreFenced(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	a, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "a", TTL: time.Hour, Clock: clock.NewFake(now)})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	defer a.Release()
	stale := a.Fence()
	if _, err := s.Pool().Exec(ctx, `UPDATE leases SET token = token + 1 WHERE name = 'scanner.bitcoin'`); err != nil {
		t.Fatal(err)
	}
	held := &store.Fence{Name: "scanner.bitcoin", Token: a.Token() + 1}
	write := func(f *store.Fence, fn func(tx *store.Tx)) error {
		return s.InTx(ctx, func(tx *store.Tx) error {
			tx.Fence(f)
			fn(tx)
			return nil
		})
	}
	state := func() string {
		t.Helper()
		var d string
		if err := s.Pool().QueryRow(ctx, `SELECT coalesce((SELECT height || ' ' || hash FROM cursors WHERE network = 'bitcoin'), 'none')
			|| ' / ' || coalesce((SELECT string_agg(height || ':' || hash, ',' ORDER BY height) FROM blocks WHERE network = 'bitcoin'), 'none')`).Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	steps := []struct {
		name string
		fn   func(tx *store.Tx)
		want string
	}{
		{"init", func(tx *store.Tx) {
			tx.QueueInitCursor("bitcoin", store.BlockRef{Height: 10, Hash: "h10"}, time.Time{}, now)
		}, "10 h10 / 10:h10"},
		{"reset", func(tx *store.Tx) {
			tx.QueueResetCursor("bitcoin", store.BlockRef{Height: 12, Hash: "h12", Parent: "h11"}, time.Time{}, now)
		}, "12 h12 / 10:h10,12:h12"},
		{"rewind", func(tx *store.Tx) { tx.QueueRewindCursor("bitcoin", 10, "h10", now) }, "10 h10 / 10:h10"},
	}
	for _, st := range steps {
		before := state()
		if err := write(stale, st.fn); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("%s with a stale fence: %v, want ErrFenced", st.name, err)
		}
		if got := state(); got != before {
			t.Fatalf("%s with a stale fence wrote: %q, was %q", st.name, got, before)
		}
		if err := write(held, st.fn); err != nil {
			t.Fatalf("%s with the held lease: %v", st.name, err)
		}
		if got := state(); got != st.want {
			t.Fatalf("after %s: %q, want %q", st.name, got, st.want)
		}
	}
}
