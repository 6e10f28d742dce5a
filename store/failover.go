package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/logs"
)

// ErrUnavailable is returned when the database cannot be reached, or only a
// read-only server (a standby) answers, for longer than Options.RetryFor:
// a failover that did not finish in time. Nothing was committed by the
// failing call (or it was, and a retry under the same idempotency key
// replays it). The API answers it with 503 database_unavailable.
var ErrUnavailable = errors.New("database unavailable")

// Options tune how the store behaves towards its server when the server
// goes away. Zero fields take the defaults below; connect_timeout and
// statement_timeout in the URL win over ConnectTimeout and StatementTimeout.
type Options struct {
	// ConnectTimeout bounds each host's connection attempt (default 5s).
	ConnectTimeout time.Duration
	// StatementTimeout is the server's statement_timeout for the pool's
	// sessions (default 30s; migrations run without one).
	StatementTimeout time.Duration
	// Keepalive is the idle time before TCP keepalive probes and the
	// interval between them (default 5s; 3 unanswered probes end the
	// connection). The TCP user timeout (unacknowledged data) is 3 times it.
	Keepalive time.Duration
	// ProbeInterval is how often Run's probe checks that a read-write
	// server answers (default 1s), and ProbeTimeout how long one check may
	// take before the server is declared lost (default 3s): every
	// connection is then closed at once, so no statement waits on a
	// primary that vanished without closing its sockets.
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
	// RetryFor is how long InTx keeps retrying a transaction that failed
	// because the server went away before it gives up with ErrUnavailable
	// (default 15s).
	RetryFor time.Duration
	// Log receives the probe's transitions (default: discarded).
	Log *slog.Logger
	// Trace, when set, is called with each statement's SQL as a connection
	// sends it, and once per batch (its statements joined by "; "): once
	// per round trip the store asks for. Tests count round trips with it.
	Trace func(sql string)
}

// OptionsOf returns the Options that the configuration's database block
// sets (its zero fields keep the defaults).
func OptionsOf(c config.Database, log *slog.Logger) Options {
	return Options{ConnectTimeout: c.ConnectTimeout.Duration, StatementTimeout: c.StatementTimeout.Duration,
		Keepalive: c.Keepalive.Duration, ProbeInterval: c.ProbeInterval.Duration, ProbeTimeout: c.ProbeTimeout.Duration,
		RetryFor: c.RetryFor.Duration, Log: log}
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ConnectTimeout, 5*time.Second)
	def(&o.StatementTimeout, 30*time.Second)
	def(&o.Keepalive, 5*time.Second)
	def(&o.ProbeInterval, time.Second)
	def(&o.ProbeTimeout, 3*time.Second)
	def(&o.RetryFor, 15*time.Second)
	o.Log = logs.Or(o.Log)
	return o
}

// configure applies the options to a parsed pool configuration: the
// dialer (keepalives, user timeout, tracked connections), the connect and
// statement timeouts, and the read-write check on every new connection.
func (s *Store) configure(cfg *pgxpool.Config, url string) {
	o := s.opt
	cc := cfg.ConnConfig
	if !hasParam(url, "connect_timeout") {
		cc.ConnectTimeout = o.ConnectTimeout
	}
	if o.Trace != nil {
		cc.Tracer = tracer{o.Trace}
	}
	if _, ok := cc.RuntimeParams["statement_timeout"]; !ok {
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	}
	dialer := &net.Dialer{Timeout: cc.ConnectTimeout,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: o.Keepalive, Interval: o.Keepalive, Count: 3},
		Control:         userTimeout(3 * o.Keepalive)}
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return s.conns.track(c), nil
	}
	// A read-only server (a standby, or a primary set read-only) is never
	// written to: whatever target_session_attrs the URL says, a connection
	// is kept only when the server accepts writes. With several hosts pgx
	// then tries the next one.
	switch cc.ValidateConnect {
	case nil:
		cc.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	default:
		v := cc.ValidateConnect
		cc.ValidateConnect = func(ctx context.Context, pc *pgconn.PgConn) error {
			if err := v(ctx, pc); err != nil {
				return err
			}
			return pgconn.ValidateConnectTargetSessionAttrsReadWrite(ctx, pc)
		}
	}
}

// hasParam reports whether the URL (or keyword/value string) sets name.
func hasParam(url, name string) bool {
	for i := 0; i+len(name) < len(url); i++ {
		if url[i:i+len(name)+1] == name+"=" && (i == 0 || url[i-1] == '?' || url[i-1] == '&' || url[i-1] == ' ') {
			return true
		}
	}
	return false
}

// connSet holds every connection the store dialed and has not closed, so
// that a lost server's connections can all be closed at once.
type connSet struct {
	mu sync.Mutex
	m  map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.m, c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

func (s *connSet) track(c net.Conn) net.Conn {
	t := &trackedConn{Conn: c, set: s}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[*trackedConn]struct{}{}
	}
	s.m[t] = struct{}{}
	s.mu.Unlock()
	return t
}

// severAll closes every tracked connection: each statement waiting on one
// fails at once with a network error.
func (s *connSet) severAll() int {
	s.mu.Lock()
	cs := s.m
	s.m = nil
	s.mu.Unlock()
	for c := range cs {
		_ = c.Conn.Close()
	}
	return len(cs)
}

// IsUnavailable reports whether err means the database could not be used
// (ErrUnavailable, a lost or refused connection, a server shutting down or
// starting, or a read-only server) rather than that the request was wrong.
// Such a failure committed nothing that a retry under the same idempotency
// key does not find.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "25006": // read_only_sql_transaction: a standby
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, starting
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	if errors.Is(err, pgconn.ErrReadOnlyConnection) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	// pgx reports a connection it closed on an earlier failure this way.
	return pgconn.SafeToRetry(err)
}

// health is what the probe last saw.
type health struct {
	up       atomic.Bool
	readOnly atomic.Bool
	// losses counts the times the server was declared lost.
	losses atomic.Int64
	mu     sync.Mutex
	// back is closed when the server answers again after a loss.
	back chan struct{}
}

// Up reports whether the last probe found a read-write server (true until
// the first probe when Run does not run).
func (s *Store) Up() bool { return s.health.up.Load() }

// ReadOnly reports whether the last probe found only a read-only server
// (a standby not yet promoted, or a server set read-only).
func (s *Store) ReadOnly() bool { return s.health.readOnly.Load() }

// Losses is how many times the probe declared the server lost.
func (s *Store) Losses() int64 { return s.health.losses.Load() }

// lost marks the server lost and closes every connection of the store.
func (s *Store) lost(reason error) {
	s.health.mu.Lock()
	if s.health.up.Load() {
		s.health.up.Store(false)
		s.health.back = make(chan struct{})
		s.health.losses.Add(1)
	}
	s.health.mu.Unlock()
	n := s.conns.severAll()
	s.pool.Reset()
	s.opt.Log.Warn("database lost: every connection closed", "connections", n, "err", reason)
}

// found marks the server back.
func (s *Store) found() {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.readOnly.Store(false)
	if !s.health.up.Load() {
		s.health.up.Store(true)
		if s.health.back != nil {
			close(s.health.back)
			s.health.back = nil
		}
		s.opt.Log.Info("database answers (read-write)")
	}
}

// waitBack waits until the probe finds the server again, ctx ends or d
// passes, whichever comes first.
func (s *Store) waitBack(ctx context.Context, d time.Duration) {
	s.health.mu.Lock()
	back := s.health.back
	s.health.mu.Unlock()
	if back == nil {
		// No probe, or the probe has not noticed yet: a short pause.
		back = make(chan struct{})
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-back:
	case <-t.C:
	}
}

// probe checks, every ProbeInterval until ctx ends, that a read-write
// server answers within ProbeTimeout on a connection of its own. A check
// that fails or does not answer in time declares the server lost (see
// lost); the first check that succeeds after that declares it back.
func (s *Store) probe(ctx context.Context) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_ = conn.Close(cctx)
			cancel()
		}
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := s.probeOnce(ctx, &conn)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			s.found()
		} else {
			if conn != nil {
				_ = conn.PgConn().Conn().Close()
				conn = nil
			}
			ro := errors.Is(err, pgconn.ErrReadOnlyConnection)
			if s.health.up.Load() || !s.health.readOnly.Load() && ro {
				s.lost(err)
			}
			s.health.readOnly.Store(ro)
		}
		t.Reset(s.opt.ProbeInterval)
	}
}

// probeOnce runs one check, connecting first when needed.
func (s *Store) probeOnce(ctx context.Context, conn **pgx.Conn) error {
	if *conn == nil {
		// Connecting tries each host in turn (ConnectTimeout each).
		cc := s.pool.Config().ConnConfig
		cctx, cancel := context.WithTimeout(ctx, s.opt.ProbeTimeout+time.Duration(1+len(cc.Fallbacks))*cc.ConnectTimeout)
		c, err := pgx.ConnectConfig(cctx, s.pool.Config().ConnConfig.Copy())
		cancel()
		if err != nil {
			return err
		}
		*conn = c
	}
	qctx, cancel := context.WithTimeout(ctx, s.opt.ProbeTimeout)
	defer cancel()
	var ro string
	if err := (*conn).QueryRow(qctx, `SHOW transaction_read_only`).Scan(&ro); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if ro == "on" {
		return fmt.Errorf("probe: %w", pgconn.ErrReadOnlyConnection)
	}
	return nil
}
