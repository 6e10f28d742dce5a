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
