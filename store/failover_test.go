package store_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

// freshURL returns a migrated database of its own and its URL.
func freshURL(t *testing.T) string {
	t.Helper()
	u := devnettest.Database(t)
	s, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return u
}

// viaProxy rewrites a database URL to go through p.
func viaProxy(t *testing.T, dbURL string, p *devnet.Proxy) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Addr()
	return u.String()
}

func proxyTo(t *testing.T, dbURL string) *devnet.Proxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := devnet.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func payables(t *testing.T, dbURL, ref string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM payables WHERE reference = $1`, ref).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func ensurePayable(s *store.Store, ctx context.Context, ref string) error {
	return s.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.EnsurePayable(ctx, store.Payable{Kind: "order", Reference: ref, AmountCents: 100, CreatedAt: now})
		return err
	})
}

func TestPoolHasTimeoutsAndKeepalivesByDefault(t *testing.T) {
	u := freshURL(t)
	s, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cc := s.Pool().Config().ConnConfig
	if cc.ConnectTimeout != 5*time.Second {
		t.Fatalf("connect timeout %v, want 5s", cc.ConnectTimeout)
	}
	var st string
	if err := s.Pool().QueryRow(context.Background(), `SHOW statement_timeout`).Scan(&st); err != nil || st != "30s" {
		t.Fatalf("statement_timeout %q %v, want 30s", st, err)
	}
	// The URL's own settings win.
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	s2, err := store.Open(context.Background(), u+sep+"connect_timeout=2&statement_timeout=1500")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.Pool().Config().ConnConfig.ConnectTimeout; got != 2*time.Second {
		t.Fatalf("connect timeout from the URL: %v", got)
	}
	if err := s2.Pool().QueryRow(context.Background(), `SHOW statement_timeout`).Scan(&st); err != nil || st != "1500ms" {
		t.Fatalf("statement_timeout from the URL %q %v", st, err)
	}
}

func TestMultiHostURLFindsTheReadWriteServer(t *testing.T) {
	u := freshURL(t)
	// The first host refuses connections (a dead primary); the second is
	// the server.
	dead, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	pu.Host = "127.0.0.1:" + itoa(dead) + "," + pu.Host
	q := pu.Query()
	q.Set("target_session_attrs", "read-write")
	pu.RawQuery = q.Encode()
	s, err := store.Open(context.Background(), pu.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref := store.NewID("MH")
	if err := ensurePayable(s, context.Background(), ref); err != nil {
		t.Fatalf("write through a multi-host URL: %v", err)
	}
	if n := payables(t, u, ref); n != 1 {
		t.Fatalf("%d payables", n)
	}
}

func TestReadOnlyServerIsNeverWrittenToAndWritesResumeOnceWritable(t *testing.T) {
	u := freshURL(t)
	pu, _ := url.Parse(u)
	db := strings.TrimPrefix(pu.Path, "/")
	admin, err := pgx.Connect(context.Background(), devnettest.AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	readOnly := func(on bool) {
		t.Helper()
		stmt := "ALTER DATABASE " + pgx.Identifier{db}.Sanitize() + " SET default_transaction_read_only = on"
		if !on {
			stmt = "ALTER DATABASE " + pgx.Identifier{db}.Sanitize() + " RESET default_transaction_read_only"
		}
		if _, err := admin.Exec(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
		// Sessions opened before keep their setting: end them, as a
		// failover does.
		if _, err := admin.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.OpenWith(context.Background(), u, store.Options{RetryFor: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := ensurePayable(s, context.Background(), store.NewID("WARM")); err != nil {
		t.Fatal(err)
	}
	readOnly(true)
	ref := store.NewID("RO")
	err = ensurePayable(s, context.Background(), ref)
	if !errors.Is(err, store.ErrUnavailable) || !store.IsUnavailable(err) {
		t.Fatalf("a write to a read-only server: %v, want ErrUnavailable", err)
	}
	readOnly(false)
	if n := payables(t, u, ref); n != 0 {
		t.Fatalf("%d payables after a refused write", n)
	}

	// A write that starts while only a read-only server answers goes
	// through once the server accepts writes again, once.
	readOnly(true)
	s2, err := store.OpenWith(context.Background(), u, store.Options{RetryFor: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	done := make(chan error, 1)
	go func() { done <- ensurePayable(s2, context.Background(), ref) }()
	select {
	case err := <-done:
		t.Fatalf("a write finished while the server was read-only: %v", err)
	case <-time.After(700 * time.Millisecond):
	}
	readOnly(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write after the server became writable: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the write did not resume once the server was writable")
	}
	if n := payables(t, u, ref); n != 1 {
		t.Fatalf("%d payables, want 1", n)
	}
}

func TestIsUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "25006"}, true},
		{&pgconn.PgError{Code: "57P01"}, true},
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "57014"}, false}, // statement timeout: not a failover
		{store.ErrNotFound, false},
		{store.ErrConflict, false},
		{store.ErrUnavailable, true},
		{nil, false},
	} {
		if got := store.IsUnavailable(c.err); got != c.want {
			t.Errorf("IsUnavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A server that vanishes without closing its sockets is noticed by the
// probe within its timeout: every connection is closed, and a transaction
// that was waiting on it is retried once the server answers again.
func TestSilentServerIsNoticedAndTransactionsResume(t *testing.T) {
	u := freshURL(t)
	p := proxyTo(t, u)
	s, err := store.OpenWith(context.Background(), viaProxy(t, u, p), store.Options{
		ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 500 * time.Millisecond,
		ConnectTimeout: time.Second, RetryFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	if err := ensurePayable(s, ctx, store.NewID("WARM")); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Notifier().Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	drain(sub)

	p.Blackhole()
	ref := store.NewID("SILENT")
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.EnsurePayable(ctx, store.Payable{Kind: "order", Reference: ref, AmountCents: 100, CreatedAt: now})
			return err
		})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.Up() {
		if time.Now().After(deadline) {
			t.Fatal("a silent server was not noticed in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s.Losses() != 1 {
		t.Fatalf("losses %d", s.Losses())
	}
	// The notifier was cut too: its subscribers are woken (a NOTIFY may
	// have been missed) and it listens again once the server is back.
	select {
	case <-sub.C:
	case <-time.After(10 * time.Second):
		t.Fatal("subscribers were not woken when the server was lost")
	}
	p.Open()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the transaction begun on the silent server: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the transaction did not resume once the server answered")
	}
	if n := payables(t, u, ref); n != 1 {
		t.Fatalf("%d payables, want 1", n)
	}
	for !s.Up() {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatal("the probe did not find the server back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Wakes work again on the new connection.
	waitListening(t, sub, u)
}

func drain(sub *store.Subscription) {
	for {
		select {
		case <-sub.C:
		default:
			return
		}
	}
}

// waitListening sends NOTIFYs until the subscription hears one.
func waitListening(t *testing.T, sub *store.Subscription, dbURL string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		drain(sub)
		if _, err := conn.Exec(context.Background(), `SELECT pg_notify($1, '')`, store.EventsChannel); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sub.C:
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
	t.Fatal("the notifier does not listen again after the server came back")
}

func itoa(n int) string { return strconv.Itoa(n) }

// Migrations run without a statement timeout, waiting for another
// instance's migration included; the pool's sessions keep theirs.
func TestMigrateWaitsBeyondTheStatementTimeout(t *testing.T) {
	u := freshURL(t)
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	const migrateLockID = 7_303_201
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockID); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	s, err := store.Open(ctx, u+sep+"statement_timeout=300")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go func() {
		time.Sleep(time.Second)
		_, _ = holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, migrateLockID)
	}()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate while another instance holds the lock for 1 s: %v", err)
	}
	var st string
	if err := s.Pool().QueryRow(ctx, `SHOW statement_timeout`).Scan(&st); err != nil || st != "300ms" {
		t.Fatalf("statement_timeout after Migrate: %q %v", st, err)
	}
}
