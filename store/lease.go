package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paywatch/paywatch/clock"
)

// DefaultLeaseTTL is how long a lease lives without a renewal: a holder
// that stops making progress (frozen, partitioned from the database) is
// replaced by a standby after at most this long plus the standby's retry.
const DefaultLeaseTTL = 10 * time.Second

// ErrFenced is returned by a write made under a lease that another
// instance took over (or that expired): nothing of the transaction was
// committed.
var ErrFenced = errors.New("fenced: this instance no longer holds the lease")

// fencedCode is the SQLSTATE paywatch_fence raises (migration 0026).
const fencedCode = "PW001"

// IsFenced reports whether err is a fenced write (ErrFenced, or the
// database's PW001 not yet translated).
func IsFenced(err error) bool {
	if errors.Is(err, ErrFenced) {
		return true
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == fencedCode
}

// LeaseConfig is how a lease is held.
type LeaseConfig struct {
	// Holder names the holder (the instance) in the lease row and the
	// status.
	Holder string
	// TTL is the lease's life without a renewal (0: DefaultLeaseTTL). The
	// holder renews it every TTL/3; a leader transaction idle for TTL is
	// ended by the server.
	TTL time.Duration
	// Clock times the renewals (nil: the wall clock). Expiry is the
	// database's clock, never this one.
	Clock clock.Clock
}

// Lease is leadership of one named role (a network's scanner): a row of
// leases with a holder, a token incremented on every takeover and an expiry
// computed by the database's clock. The holder renews it; a standby takes
// it once it has expired. Writes made as leader carry its Fence, checked in
// their own transaction (Tx.Fence): a holder that froze and woke after a
// takeover writes nothing. The lease's renewer stops when Release is called
// or when the context TryLease was given ends, whichever comes first (the
// holder, shutting down, is not told the lease was lost).
type Lease struct {
	s     *Store
	name  string
	token int64
	ttl   time.Duration
	// bg carries the values of TryLease's context without its cancellation,
	// for the release that must run after shutdown began.
	bg   context.Context
	lost chan struct{}
	stop chan struct{}
	done chan struct{}
}

// Fence is what a leader's writes carry to prove, in their transaction,
// that the lease is still theirs.
type Fence struct {
	Name  string
	Token int64
	// Idle is the server's idle_in_transaction_session_timeout for the
	// fenced transaction (0: the session's).
	Idle time.Duration
}

// TryLease tries to take the lease of name without waiting: ok is false
// while another holder's lease has not expired. The lease is renewed on
// c.Clock until it is released or ctx ends.
func (s *Store) TryLease(ctx context.Context, name string, c LeaseConfig) (*Lease, bool, error) {
	ttl := c.TTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	// One statement (migration 0039), on a pooled connection outside InTx's
	// turns: a standby never waits for the scanner's writers. A lease whose
	// holder is frozen inside a fenced transaction is locked FOR KEY SHARE
	// until the server ends that session (Fence.Idle = TTL): the takeover
	// waits that long at most (lock_timeout), then tries again later.
	var token *int64
	err := s.pool.QueryRow(ctx, `SELECT paywatch_try_lease($1, $2, $3)`, name, c.Holder, ttl.Milliseconds()).Scan(&token)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available: a frozen holder's transaction
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lease %s: %w", name, translate(err))
	}
	if token == nil {
		return nil, false, nil // held, not expired
	}
	l := &Lease{s: s, name: name, token: *token, ttl: ttl, bg: context.WithoutCancel(ctx),
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.renew(ctx, clock.Or(c.Clock))
	return l, true, nil
}

// Token is the lease's fencing token: it grows with every takeover.
func (l *Lease) Token() int64 { return l.token }

// Fence is the proof the holder's writes carry (Tx.Fence).
func (l *Lease) Fence() *Fence { return &Fence{Name: l.name, Token: l.token, Idle: l.ttl} }

// renew extends the lease every TTL/3. The lease is lost when a renewal
// finds another token (a takeover), or when none succeeded for a TTL by
// this process's clock (the database may have let it expire).
func (l *Lease) renew(ctx context.Context, clk clock.Clock) {
	defer close(l.done)
	last := clk.Now()
	for {
		t := clk.NewTimer(l.ttl / 3)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := clk.Now()
		rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
		tag, err := l.s.pool.Exec(rctx, `UPDATE leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond', renewed_at = clock_timestamp()
			WHERE name = $1 AND token = $2`, l.name, l.token, l.ttl.Milliseconds())
		cancel()
		switch {
		case err == nil && tag.RowsAffected() == 1:
			last = start
			continue
		case err == nil:
			// Another instance took the lease over.
		case ctx.Err() != nil:
			return
		case clk.Now().Sub(last) < l.ttl:
			continue // the database is away: try again while the lease may live
		}
		close(l.lost)
		return
	}
}

// Lost is closed when the lease can no longer be trusted.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release gives the lease up: it expires at once if it is still this
// holder's. Calling it twice is harmless.
func (l *Lease) Release() {
	select {
	case <-l.stop:
		return
	default:
		close(l.stop)
	}
	<-l.done
	ctx, cancel := context.WithTimeout(l.bg, l.ttl)
	defer cancel()
	_, _ = l.s.pool.Exec(ctx, `UPDATE leases SET expires_at = '-infinity' WHERE name = $1 AND token = $2`, l.name, l.token)
}

// Fence makes the transaction fail with ErrFenced, having changed nothing,
// unless f's lease is still held with f's token; nil f fences nothing. The
// check is queued: it is sent in the same round trip as the transaction's
// next statement (a leader's transaction pays one statement, no round
// trip), and it holds the lease row FOR KEY SHARE until the transaction
// ends, so a takeover waits for it. Call it before the transaction's first
// statement.
func (t *Tx) Fence(f *Fence) {
	if f == nil {
		return
	}
	t.tx.queue(`SELECT paywatch_fence($1, $2, $3)`, f.Name, f.Token, f.Idle.Milliseconds())
	t.fence, t.fenceCheck = f, t.tx.pending[len(t.tx.pending)-1]
}

// foldFence takes the fence's check out of the queue when it would be sent
// right before the caller's statement, which then makes the check itself
// at the same point (lockCursor); nil when there is no check to fold (no
// fence, the check was sent, or a statement was queued after it).
func (t *Tx) foldFence() *Fence {
	q := t.fenceCheck
	t.fenceCheck = nil
	if n := len(t.tx.pending); q != nil && n > 0 && t.tx.pending[n-1] == q {
		t.tx.pending = t.tx.pending[:n-1]
		return t.fence
	}
	return nil
}

// cursorColumns are the columns a Cursor is scanned from.
const cursorColumns = `network, height, hash, node_height, final_height, last_block_at, healthy,
	last_error, critical, leader, rescan_from, updated_at`

// lockCursor returns the statement that locks and reads network's cursor
// (CursorForUpdate), with the transaction's fence check folded in when it
// is the statement queued last (foldFence): one statement instead of two.
// The check is a filter on the cursor row, so it runs, as it did alone,
// before the row is locked; f is the folded fence (nil: none), which the
// caller checks on its own when no cursor row was found (fencedNotFound).
func (t *Tx) lockCursor(network string) (sql string, args []any, f *Fence) {
	if f = t.foldFence(); f != nil {
		return `SELECT ` + cursorColumns + ` FROM cursors WHERE network = $1 AND paywatch_fence($2, $3, $4) FOR UPDATE`,
			[]any{network, f.Name, f.Token, f.Idle.Milliseconds()}, f
	}
	return `SELECT ` + cursorColumns + ` FROM cursors WHERE network = $1 FOR UPDATE`, []any{network}, nil
}

// fencedNotFound translates the error of a cursor lock with the folded
// fence f: a missing cursor row never ran the check, which is then made
// on its own, so a stale fence fails with ErrFenced as it did before the
// read.
func (t *Tx) fencedNotFound(ctx context.Context, f *Fence, err error) error {
	err = translate(err)
	if f == nil || !errors.Is(err, ErrNotFound) {
		return err
	}
	if _, ferr := t.tx.Exec(ctx, `SELECT paywatch_fence($1, $2, $3)`, f.Name, f.Token, f.Idle.Milliseconds()); ferr != nil {
		return translate(ferr)
	}
	return err
}

// Leaseholder is who holds the lease of name: its holder and whether its
// lease is live (not expired) by the database's clock.
func (s *Store) Leaseholder(ctx context.Context, name string) (holder string, live bool, token int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT holder, expires_at > clock_timestamp(), token FROM leases WHERE name = $1`, name).Scan(&holder, &live, &token)
	return holder, live, token, translate(err)
}
