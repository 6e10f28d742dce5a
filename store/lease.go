package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/clock"
)

// leasePing is how often a lease checks its connection, and leaseTimeout
// how long one check (or the release) may take.
const (
	leasePing    = 2 * time.Second
	leaseTimeout = 5 * time.Second
)

// Lease is leadership of one named role (a network's scanner) held through a
// PostgreSQL session advisory lock on a dedicated connection. If this
// process dies or its connection breaks, the lock is released by the server
// and a standby takes over. The lease's watcher stops when Release is
// called or when the context TryLease was given ends, whichever comes
// first (the holder, shutting down, is not told the lease was lost).
type Lease struct {
	conn *pgx.Conn
	// bg carries the values of TryLease's context without its cancellation,
	// for the release that must run after shutdown began.
	bg   context.Context
	lost chan struct{}
	stop chan struct{}
	done chan struct{}
}

// TryLease tries to take the lease of name without waiting; ok is false when
// another instance holds it. The lease pings its connection on clk (nil:
// clock.Real) until it is released or ctx ends.
func (s *Store) TryLease(ctx context.Context, name string, clk clock.Clock) (*Lease, bool, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, translate(err)
	}
	conn := pc.Hijack()
	bg := context.WithoutCancel(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext('paywatch.lease.' || $1))`, name).Scan(&ok); err != nil {
		closeConn(bg, conn)
		return nil, false, fmt.Errorf("lease %s: %w", name, err)
	}
	if !ok {
		closeConn(bg, conn)
		return nil, false, nil
	}
	l := &Lease{conn: conn, bg: bg, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch(ctx, clock.Or(clk))
	return l, true, nil
}

func closeConn(bg context.Context, conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(bg, leaseTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}

// watch pings the lease connection; a failed ping means the lock may be
// gone, so the holder must stop.
func (l *Lease) watch(ctx context.Context, clk clock.Clock) {
	defer close(l.done)
	for {
		t := clk.NewTimer(leasePing)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, leaseTimeout)
			err := l.conn.Ping(pctx)
			cancel()
			if err != nil {
				close(l.lost)
				return
			}
		}
	}
}

// Lost is closed when the lease can no longer be trusted.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release gives the lease up. Calling it twice is harmless.
func (l *Lease) Release() {
	select {
	case <-l.stop:
		return
	default:
		close(l.stop)
	}
	<-l.done
	ctx, cancel := context.WithTimeout(l.bg, leaseTimeout)
	defer cancel()
	// Unlock explicitly: the server frees a closed session's locks only when
	// it notices the disconnect, so a standby could find it still held.
	_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
	_ = l.conn.Close(ctx)
}
