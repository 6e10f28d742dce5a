package store

import (
	"context"
	"time"
)

// Outbox is one webhook endpoint's undelivered events.
type Outbox struct {
	Endpoint string
	// Pending counts the events after the endpoint's last delivered one
	// (capped at OutboxCap).
	Pending int64
	// OldestAt is when the oldest of them was recorded (nil: none).
	OldestAt *time.Time
}

// OutboxCap bounds the count of an endpoint's pending events, so that a
// scrape stays cheap however far an endpoint is behind.
const OutboxCap = 100_000

// Ops is what the operations metrics read from the database at scrape
// time, so every instance reports the same truth.
type Ops struct {
	Outboxes []Outbox
	// InboxUnresolved counts the transfers that still need a finance
	// decision; InboxOldestAt is when the oldest was recorded.
	InboxUnresolved int64
	InboxOldestAt   *time.Time
	// UnrecoveredCents is what reversals could not take back from balances
	// and no recovery has taken since.
	UnrecoveredCents int64
	// OpenIntents counts the intents awaiting payment or detected.
	OpenIntents map[string]int64
}

// Operations reads Ops for the named webhook endpoints.
func (s *Store) Operations(ctx context.Context, endpoints []string) (Ops, error) {
	var o Ops
	rows, err := s.pool.Query(ctx, `SELECT w.name,
		    (SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.seq > w.last_seq LIMIT $2) p),
		    (SELECT e.created_at FROM events e WHERE e.seq > w.last_seq ORDER BY e.seq LIMIT 1)
		FROM webhook_endpoints w WHERE w.name = ANY($1) ORDER BY w.name`, endpoints, OutboxCap)
	if err != nil {
		return o, translate(err)
	}
	for rows.Next() {
		var b Outbox
		if err := rows.Scan(&b.Endpoint, &b.Pending, &b.OldestAt); err != nil {
			rows.Close()
			return o, translate(err)
		}
		o.Outboxes = append(o.Outboxes, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return o, translate(err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*), min(t.created_at) FROM transfers t WHERE `+inboxSelection("unresolved")).
		Scan(&o.InboxUnresolved, &o.InboxOldestAt); err != nil {
		return o, translate(err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(unrecovered_cents) FILTER (WHERE type = 'reversal'), 0)
		- coalesce(sum(amount_cents) FILTER (WHERE type = 'recovery'), 0)
		FROM ledger_entries WHERE unrecovered_cents > 0 OR type = 'recovery'`).Scan(&o.UnrecoveredCents); err != nil {
		return o, translate(err)
	}
	o.OpenIntents = map[string]int64{"awaiting_payment": 0, "detected": 0}
	rows, err = s.pool.Query(ctx, `SELECT status, count(*) FROM intents WHERE status IN ('awaiting_payment', 'detected') GROUP BY status`)
	if err != nil {
		return o, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return o, translate(err)
		}
		o.OpenIntents[st] = n
	}
	return o, translate(rows.Err())
}

// EventCountsAfter counts the events after seq by type, and returns the
// last seq it counted (seq when there is none).
func (s *Store) EventCountsAfter(ctx context.Context, seq int64) (map[string]int64, int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT type, count(*), max(seq) FROM events WHERE seq > $1 GROUP BY type`, seq)
	if err != nil {
		return nil, seq, translate(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	last := seq
	for rows.Next() {
		var typ string
		var n, m int64
		if err := rows.Scan(&typ, &n, &m); err != nil {
			return nil, seq, translate(err)
		}
		out[typ] = n
		last = max(last, m)
	}
	return out, last, translate(rows.Err())
}

// Confirmation is how long one paid intent took from its payment's
// detection to its decision.
type Confirmation struct {
	Network string
	Seconds float64
}

// ConfirmationsBetween returns the detection-to-paid time of the intents
// whose intent.paid event has a seq in (after, upTo].
func (s *Store) ConfirmationsBetween(ctx context.Context, after, upTo int64) ([]Confirmation, error) {
	rows, err := s.pool.Query(ctx, `SELECT i.network, extract(epoch FROM i.paid_at - i.detected_at)::float8
		FROM events e JOIN intents i ON i.id = e.intent_id
		WHERE e.type = 'intent.paid' AND e.seq > $1 AND e.seq <= $2 AND i.detected_at IS NOT NULL AND i.paid_at IS NOT NULL`, after, upTo)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []Confirmation
	for rows.Next() {
		var c Confirmation
		if err := rows.Scan(&c.Network, &c.Seconds); err != nil {
			return nil, translate(err)
		}
		out = append(out, c)
	}
	return out, translate(rows.Err())
}
