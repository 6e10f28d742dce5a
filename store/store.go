package store

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"

	"github.com/paywatch/paywatch/clock"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write violates a uniqueness or integrity
// rule (the row exists, or another writer won).
var ErrConflict = errors.New("conflict")

// ErrCheck is returned when a write violates a CHECK constraint: the value
// is out of the allowed domain.
var ErrCheck = errors.New("constraint violated")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is a pool of connections to paywatch's database.
type Store struct {
	pool *pgxpool.Pool
	// active holds one token per transaction of InTx in flight.
	active chan struct{}
	// bg runs the store's background work (LISTEN connections).
	bg *background
	// onCommit, when set, is called after every committed transaction.
	onCommit atomic.Pointer[func(bool)]
	// opt, conns and health: behaviour when the server goes away
	// (failover.go).
	opt    Options
	conns  connSet
	health health
}

// OnCommit makes f run after every transaction committed through InTx or
// Tx.Commit, after the transaction's own after-commit hooks, in the
// committing goroutine (nil: none); events says whether the transaction
// appended an event (AppendEvent, QueueAppendEvent, QueueAppendEvents:
// the only ways an event is written). The simulator uses it to read what
// a commit wrote right after it, before anything else changes it.
func (s *Store) OnCommit(f func(events bool)) {
	if f == nil {
		s.onCommit.Store(nil)
		return
	}
	s.onCommit.Store(&f)
}

func (s *Store) committed(events bool) {
	if f := s.onCommit.Load(); f != nil {
		(*f)(events)
	}
}

// ActiveTransactions is how many InTx transactions run at once; more wait
// in the process for a turn. Past a few per server core, concurrent writers
// only queue inside PostgreSQL, on the event lock (every transaction that
// appends an event commits in turn) and on its own locks, where each wait
// and wake-up costs the server CPU its writers need: at 16 concurrent intent
// creations on 2 cores, 4 turns gave about 20% more intents/s and a third
// lower p99 than 16 (api BenchmarkCreateIntent, same machine, back to back).
// A transaction must not wait for a second InTx transaction (nor for a
// second connection): with all turns taken, it would wait forever.
const ActiveTransactions = 4

// Open connects to the database at url with the default Options. It does
// not migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith connects to the database at url (one host, or several:
// postgres://a,b/paywatch?target_session_attrs=read-write finds whichever
// is the primary). Only read-write servers are used. It does not migrate.
func OpenWith(ctx context.Context, url string, opt Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	s := &Store{active: make(chan struct{}, ActiveTransactions), bg: newBackground(ctx), opt: opt.withDefaults()}
	s.health.up.Store(true)
	s.configure(cfg, url)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	s.pool = pool
	return s, nil
}

// Close stops the store's background work and closes every connection.
func (s *Store) Close() {
	s.bg.stop()
	s.pool.Close()
}

// Pool exposes the pool to packages that need a dedicated connection
// (LISTEN, advisory session locks).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Migration is one embedded schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

const migrateLockID = 7_303_201

// Migrate applies the embedded migrations that are not applied yet and
// returns how many it applied.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	// A migration may rewrite a large table, and another instance may hold
	// the lock while it does: no statement timeout. The connection goes
	// back to the pool, so the setting is put back.
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "RESET statement_timeout")
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockID); err != nil {
		return 0, fmt.Errorf("migrate lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockID)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	applied := 0
	for _, m := range ms {
		var done bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)", m.Version).Scan(&done); err != nil {
			return applied, fmt.Errorf("migrate: %w", err)
		}
		if done {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		applied++
	}
	return applied, nil
}

// Pending returns how many embedded migrations are not applied yet; /readyz
// is false while it is not zero.
func (s *Store) Pending(ctx context.Context) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	var n int
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ANY($1)`, versions(ms)).Scan(&n)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return len(ms), nil
		}
		return 0, err
	}
	return len(ms) - n, nil
}

func versions(ms []Migration) []int32 {
	out := make([]int32, len(ms))
	for i, m := range ms {
		out[i] = int32(m.Version)
	}
	return out
}

// Tx is one database transaction. Its methods are the only writes paywatch
// makes.
type Tx struct {
	tx    *txConn
	store *Store
	// afterCommit runs once the transaction committed (side effects).
	afterCommit []func()
	// events: an event was appended (for OnCommit).
	events bool
	// eventBatch is the last batch of queued events (queueEvent).
	eventBatch *eventBatch
	// fence is the transaction's fence (Fence) and fenceCheck its check
	// while queued: a cursor lock sent right after it makes the check
	// itself (foldFence).
	fence      *Fence
	fenceCheck *pgx.QueuedQuery
}

// AfterCommit registers f to run after a successful commit.
func (t *Tx) AfterCommit(f func()) { t.afterCommit = append(t.afterCommit, f) }

// InTx runs fn in a transaction and commits it. Serialization failures and
// deadlocks are retried (fn must be repeatable); any other error rolls back.
// At most ActiveTransactions run at once; the others wait for a turn (or
// for ctx). After-commit hooks run after the turn is given back.
//
// A transaction that failed because the server went away (IsUnavailable:
// the primary died or vanished, only a standby answers) is retried once a
// read-write server answers again, for up to Options.RetryFor; then InTx
// gives up with ErrUnavailable. Its COMMIT may have been applied before
// the connection broke: fn runs again and finds what it wrote (every
// write is idempotent on a natural key or an idempotency key), so a
// retried transaction applies its effects once.
func (s *Store) InTx(ctx context.Context, fn func(*Tx) error) error {
	var err error
	var giveUp time.Time
	for attempt, lost := 0, 0; attempt < 8; {
		var t *Tx
		t, err = s.inTxOnce(ctx, fn)
		if err == nil {
			for _, f := range t.afterCommit {
				f()
			}
			s.committed(t.events)
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		if IsUnavailable(err) {
			if giveUp.IsZero() {
				giveUp = time.Now().Add(s.opt.RetryFor)
			}
			if !time.Now().Before(giveUp) {
				return fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			lost++
			// Connections opened before the loss are useless; the pool
			// reconnects (to the new primary) on the next acquire.
			s.pool.Reset()
			s.waitBack(ctx, min(time.Until(giveUp), reconnectPause.Delay(lost)))
			continue
		}
		if !isRetryable(err) {
			return err
		}
		attempt++
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 3 * time.Millisecond):
		}
	}
	return err
}

// reconnectPause spaces InTx's attempts while the server is away.
var reconnectPause = clock.Backoff{Min: 50 * time.Millisecond, Max: time.Second, Jitter: 0.3}

// inTxOnce runs fn in one transaction during a turn and returns it once
// committed (for its after-commit hooks).
func (s *Store) inTxOnce(ctx context.Context, fn func(*Tx) error) (*Tx, error) {
	select {
	case s.active <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.active }()
	t, err := s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	ptx := t.tx
	if err := fn(t); err != nil {
		_ = ptx.Rollback(context.WithoutCancel(ctx))
		if IsFenced(err) && !errors.Is(err, ErrFenced) {
			err = translate(err) // a fence checked in a statement that does not translate
		}
		return nil, err
	}
	if err := ptx.Commit(ctx); err != nil {
		return nil, translate(err)
	}
	return t, nil
}

// Begin starts a transaction the caller must Commit or Rollback. Tests use it
// to run each case in one rolled-back transaction.
//
// BEGIN is sent with the first statement (see txConn), so a transaction
// costs no round trip of its own.
func (s *Store) Begin(ctx context.Context) (*Tx, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return &Tx{tx: &txConn{c: conn}, store: s}, nil
}

// Commit commits a transaction from Begin and runs its after-commit hooks.
func (t *Tx) Commit(ctx context.Context) error {
	if err := t.tx.Commit(ctx); err != nil {
		return translate(err)
	}
	for _, f := range t.afterCommit {
		f()
	}
	if t.store != nil {
		t.store.committed(t.events)
	}
	return nil
}

// Rollback abandons a transaction from Begin.
func (t *Tx) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

func isRetryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return false
}

// translate maps pgx errors to the package's sentinels, keeping the cause.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505", "23503":
			return fmt.Errorf("%w: %s (%s)", ErrConflict, pgErr.Message, pgErr.ConstraintName)
		case "23514", "23502", "22003":
			return fmt.Errorf("%w: %s (%s)", ErrCheck, pgErr.Message, pgErr.ConstraintName)
		case "40001", "40P01":
			return err
		case fencedCode:
			return fmt.Errorf("%w: %s", ErrFenced, pgErr.Message)
		}
	}
	return err
}

// NewID returns a new sortable identifier with a prefix, e.g. "pi_01J…".
func NewID(prefix string) string {
	return prefix + "_" + ulid.MustNew(ulid.Now(), rand.Reader).String()
}

// ErrInsufficientFunds is returned by a debit larger than the balance.
var ErrInsufficientFunds = errors.New("insufficient funds")
