package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lease is leadership of one named role (a network's scanner) held through a
// PostgreSQL session advisory lock on a dedicated connection. If this
// process dies or its connection breaks, the lock is released by the server
// and a standby takes over.
type Lease struct {
	conn *pgx.Conn
	lost chan struct{}
	stop chan struct{}
	done chan struct{}
}

// TryLease tries to take the lease of name without waiting; ok is false when
// another instance holds it.
func (s *Store) TryLease(ctx context.Context, name string) (*Lease, bool, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, translate(err)
	}
	conn := pc.Hijack()
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext('paywatch.lease.' || $1))`, name).Scan(&ok); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, false, fmt.Errorf("lease %s: %w", name, err)
	}
	if !ok {
		conn.Close(context.WithoutCancel(ctx))
		return nil, false, nil
	}
	l := &Lease{conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, true, nil
}

// watch pings the lease connection; a failed ping means the lock may be
// gone, so the holder must stop.
func (l *Lease) watch() {
	defer close(l.done)
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := l.conn.Ping(ctx)
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Unlock explicitly: the server frees a closed session's locks only when
	// it notices the disconnect, so a standby could find it still held.
	_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
	_ = l.conn.Close(ctx)
}
