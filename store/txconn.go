package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// txConn is a transaction on one pooled connection that saves round trips:
// BEGIN is sent in the same pipeline as the transaction's first statement,
// and statements queued with queue are sent, in order, in the same pipeline
// as the next statement or as COMMIT. Statement order is exactly the order
// of the calls; a queued statement's error is reported by the call that
// sends it. Statements queued with queueAtCommit wait for COMMIT itself,
// after everything else, whatever runs in between.
type txConn struct {
	c        *pgxpool.Conn
	begun    bool
	closed   bool
	pending  []*pgx.QueuedQuery
	atCommit []*pgx.QueuedQuery
}

func (c *txConn) queue(sql string, args ...any) {
	c.pending = append(c.pending, &pgx.QueuedQuery{SQL: sql, Arguments: args})
}

// queueAtCommit holds a statement back until COMMIT (event appends: the
// event lock they take is then held for no round trip).
func (c *txConn) queueAtCommit(sql string, args ...any) *pgx.QueuedQuery {
	q := &pgx.QueuedQuery{SQL: sql, Arguments: args}
	c.atCommit = append(c.atCommit, q)
	return q
}

// lastAtCommit reports whether q is the last statement held back until
// COMMIT (none was queued after it, and it was not sent or dropped).
func (c *txConn) lastAtCommit(q *pgx.QueuedQuery) bool {
	return len(c.atCommit) > 0 && c.atCommit[len(c.atCommit)-1] == q
}

// prefix takes what must precede the next statement: BEGIN (once) and the
// queued statements.
func (c *txConn) prefix() []*pgx.QueuedQuery {
	var pre []*pgx.QueuedQuery
	if !c.begun {
		pre = append(pre, &pgx.QueuedQuery{SQL: "begin"})
		c.begun = true
	}
	pre = append(pre, c.pending...)
	c.pending = nil
	return pre
}

// flush sends BEGIN and the queued statements, if any, on their own.
func (c *txConn) flush(ctx context.Context) error {
	pre := c.prefix()
	if len(pre) == 0 {
		return nil
	}
	return c.c.SendBatch(ctx, &pgx.Batch{QueuedQueries: pre}).Close()
}

// send sends pre followed by b's statements in one pipeline and reads pre's
// results, so the caller reads b's as if b had been sent alone.
func (c *txConn) send(ctx context.Context, pre []*pgx.QueuedQuery, b *pgx.Batch) pgx.BatchResults {
	br := c.c.SendBatch(ctx, &pgx.Batch{QueuedQueries: append(pre, b.QueuedQueries...)})
	for range pre {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return errBatch{err}
		}
	}
	return br
}

func (c *txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	pre := c.prefix()
	if len(pre) == 0 {
		return c.c.Exec(ctx, sql, args...)
	}
	if len(args) == 0 {
		// Without arguments pgx uses the simple protocol, which allows
		// several statements in one string; a pipeline does not.
		if err := c.c.SendBatch(ctx, &pgx.Batch{QueuedQueries: pre}).Close(); err != nil {
			return pgconn.CommandTag{}, err
		}
		return c.c.Exec(ctx, sql)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := c.send(ctx, pre, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (c *txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	pre := c.prefix()
	if len(pre) == 0 {
		return c.c.QueryRow(ctx, sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := c.send(ctx, pre, b)
	return batchRow{br: br, row: br.QueryRow()}
}

func (c *txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.c.Query(ctx, sql, args...)
}

func (c *txConn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	pre := c.prefix()
	if len(pre) == 0 {
		return c.c.SendBatch(ctx, b)
	}
	return c.send(ctx, pre, b)
}

// Commit sends the queued statements and COMMIT in one round trip and
// releases the connection.
func (c *txConn) Commit(ctx context.Context) error {
	if c.closed {
		return pgx.ErrTxClosed
	}
	defer c.release()
	if !c.begun && len(c.pending) == 0 && len(c.atCommit) == 0 {
		return nil // nothing was sent: nothing to commit
	}
	pre := append(c.prefix(), c.atCommit...)
	c.atCommit = nil
	b := &pgx.Batch{}
	b.Queue("commit")
	br := c.send(ctx, pre, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Rollback abandons the transaction and releases the connection.
func (c *txConn) Rollback(ctx context.Context) error {
	if c.closed {
		return pgx.ErrTxClosed
	}
	c.pending, c.atCommit = nil, nil
	var err error
	if c.c.Conn().PgConn().TxStatus() != 'I' {
		if _, err = c.c.Exec(ctx, "rollback"); err != nil {
			// The connection's state is unknown: do not reuse it.
			_ = c.c.Conn().Close(context.WithoutCancel(ctx))
		}
	}
	c.release()
	return err
}

// release returns the connection to the pool, which discards it when a
// transaction is still open on it.
func (c *txConn) release() {
	if c.closed {
		return
	}
	c.closed = true
	c.c.Release()
}

// batchRow is a row read from a pipeline; Scan also ends the pipeline.
type batchRow struct {
	br  pgx.BatchResults
	row pgx.Row
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// errBatch is a pipeline that failed before the caller's statements.
type errBatch struct{ err error }

func (b errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b errBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b errBatch) QueryRow() pgx.Row                { return errRow{b.err} }
func (b errBatch) Close() error                     { return b.err }
func (b errBatch) Tx() pgx.Tx                       { return nil }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
