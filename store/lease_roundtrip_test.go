package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

// roundTrips is a store on a database of its own whose statements are
// counted: take returns the SQL sent since the last take.
func roundTrips(t *testing.T) (s *store.Store, take func() []string) {
	t.Helper()
	var mu sync.Mutex
	var sent []string
	s, err := store.OpenWith(context.Background(), devnettest.Database(t), store.Options{Trace: func(sql string) {
		mu.Lock()
		sent = append(sent, sql)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	take = func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := sent
		sent = nil
		return out
	}
	take()
	return s, take
}

// TryLease is one round trip whether it takes a lease without a row, finds
// it held, or takes over an expired one (it was six: BEGIN, the lock
// timeout, the insert, the check FOR UPDATE, the update, COMMIT), and the
// token grows by one per takeover (issue 37 item 3).
func TestTryLeaseIsOneRoundTrip(t *testing.T) {
	s, take := roundTrips(t)
	ctx := context.Background()
	try := func(holder string) (*store.Lease, bool) {
		t.Helper()
		take()
		l, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: holder, TTL: time.Hour, Clock: clock.NewFake(now)})
		if err != nil {
			t.Fatal(err)
		}
		if sent := take(); len(sent) != 1 {
			t.Fatalf("TryLease by %s sent %d statements, want 1: %q", holder, len(sent), sent)
		}
		return l, ok
	}
	a, ok := try("a")
	if !ok || a.Token() != 1 {
		t.Fatalf("the first lease: ok %v token %d, want token 1", ok, tokenOf(a))
	}
	if _, ok := try("b"); ok {
		t.Fatal("a held lease was taken")
	}
	if h, live, tok, err := s.Leaseholder(ctx, "scanner.bitcoin"); err != nil || h != "a" || !live || tok != 1 {
		t.Fatalf("leaseholder while held: %q live %v token %d %v", h, live, tok, err)
	}
	a.Release()
	b, ok := try("b")
	if !ok || b.Token() != 2 {
		t.Fatalf("the takeover: ok %v token %d, want token 2", ok, tokenOf(b))
	}
	defer b.Release()
	var acquired, renewed, expires time.Time
	var inTTL bool
	if err := s.Pool().QueryRow(ctx, `SELECT acquired_at, renewed_at, expires_at,
		expires_at BETWEEN clock_timestamp() + interval '59 minutes' AND clock_timestamp() + interval '1 hour'
		FROM leases WHERE name = 'scanner.bitcoin'`).Scan(&acquired, &renewed, &expires, &inTTL); err != nil {
		t.Fatal(err)
	}
	// Each is its own clock_timestamp(), microseconds apart.
	if d, e := renewed.Sub(acquired), expires.Sub(acquired)-time.Hour; d < -time.Second || d > time.Second || e < -time.Second || e > time.Second || !inTTL {
		t.Fatalf("after the takeover: acquired %v renewed %v expires %v: want acquired = renewed = expiry - TTL", acquired, renewed, expires)
	}
}

func tokenOf(l *store.Lease) int64 {
	if l == nil {
		return -1
	}
	return l.Token()
}

// An expired lease whose row another transaction holds FOR KEY SHARE (a
// leader frozen inside a fenced transaction, its session not ended) is not
// taken: TryLease waits the TTL at most for the row, then answers "not
// taken" without an error; once the row is free it takes it.
func TestTryLeaseWaitsTheTTLAtMostForALockedRow(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	a, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "a", TTL: time.Hour, Clock: clock.NewFake(now)})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	a.Release() // expired now
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM leases WHERE name = 'scanner.bitcoin' FOR KEY SHARE`); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	start := time.Now()
	b, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "b", TTL: ttl, Clock: clock.NewFake(now)})
	if err != nil || ok {
		t.Fatalf("a locked row: ok %v err %v, want not taken and no error", ok, err)
	}
	if waited := time.Since(start); waited < ttl {
		t.Fatalf("a locked row: answered after %v, before the TTL %v", waited, ttl)
	}
	if b != nil {
		t.Fatal("a lease returned with ok false")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	b, ok, err = s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "b", TTL: ttl, Clock: clock.NewFake(now)})
	if err != nil || !ok || b.Token() != a.Token()+1 {
		t.Fatalf("the freed row: ok %v err %v token %d, want %d", ok, err, tokenOf(b), a.Token()+1)
	}
	b.Release()
}
