package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrEndpointBusy is returned by LockEndpoint when another sender (another
// instance) holds the endpoint.
var ErrEndpointBusy = errors.New("webhook endpoint is being delivered by another sender")

// WebhookEndpoint is the delivery state of one configured endpoint: every
// event with seq <= LastSeq is delivered (or given up on); the next one is
// retried at NextAttemptAt after Attempts failures since FirstFailedAt.
type WebhookEndpoint struct {
	Name          string
	URL           string
	LastSeq       int64
	Attempts      int
	NextAttemptAt *time.Time
	FirstFailedAt *time.Time
	LastError     string
	UpdatedAt     time.Time
}

// WebhookAttempt is one line of the delivery log.
type WebhookAttempt struct {
	ID         int64
	Endpoint   string
	EventSeq   int64
	EventID    string
	StatusCode *int
	Error      string
	DurationMS int
	Outcome    string
	Attempt    int
	CreatedAt  time.Time
}

const endpointColumns = `name, url, last_seq, attempts, next_attempt_at, first_failed_at, last_error, updated_at`

func scanEndpoint(row pgx.Row) (WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := row.Scan(&e.Name, &e.URL, &e.LastSeq, &e.Attempts, &e.NextAttemptAt, &e.FirstFailedAt, &e.LastError, &e.UpdatedAt)
	return e, translate(err)
}

// EnsureWebhookEndpoint creates the endpoint's state row or updates its
// URL. A new endpoint's cursor is 0 (every event in the table will be
// delivered), or the newest event's seq when startNow (only events from now
// on). An existing endpoint keeps its cursor.
func (s *Store) EnsureWebhookEndpoint(ctx context.Context, name, url string, startNow bool, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_endpoints (name, url, last_seq, updated_at)
		VALUES ($1, $2, CASE WHEN $4 THEN coalesce((SELECT max(seq) FROM events), 0) ELSE 0 END, $3)
		ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url WHERE webhook_endpoints.url <> EXCLUDED.url`, name, url, now, startNow)
	return translate(err)
}

// LockEndpoint locks the endpoint's row (SELECT … FOR UPDATE SKIP LOCKED)
// in the transaction: while it is held no other sender delivers to the
// endpoint. It is ErrEndpointBusy when another transaction holds it and
// ErrNotFound when the endpoint has no state row.
func (t *Tx) LockEndpoint(ctx context.Context, name string) (WebhookEndpoint, error) {
	e, err := scanEndpoint(t.tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE name = $1 FOR UPDATE SKIP LOCKED`, name))
	if errors.Is(err, ErrNotFound) {
		var exists bool
		if err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE name = $1)`, name).Scan(&exists); err != nil {
			return e, translate(err)
		}
		if exists {
			return e, ErrEndpointBusy
		}
	}
	return e, err
}

// SaveEndpoint writes the endpoint's delivery state.
func (t *Tx) SaveEndpoint(ctx context.Context, e WebhookEndpoint) error {
	_, err := t.tx.Exec(ctx, `UPDATE webhook_endpoints SET last_seq = $2, attempts = $3, next_attempt_at = $4,
		first_failed_at = $5, last_error = $6, updated_at = $7 WHERE name = $1`,
		e.Name, e.LastSeq, e.Attempts, e.NextAttemptAt, e.FirstFailedAt, e.LastError, e.UpdatedAt)
	return translate(err)
}

// NextEvents returns up to limit events after seq, of the given types (all
// when empty), in seq order, inside the transaction.
func (t *Tx) NextEvents(ctx context.Context, after int64, types []string, limit int) ([]Event, error) {
	return collectEvents(t.tx.Query(ctx, eventsAfterSQL, after, types, limit))
}

// LogAttempt appends a line to the delivery log.
func (t *Tx) LogAttempt(ctx context.Context, a WebhookAttempt) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO webhook_attempts (endpoint, event_seq, event_id, status_code, error, duration_ms, outcome, attempt, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.Endpoint, a.EventSeq, a.EventID, a.StatusCode, a.Error, a.DurationMS, a.Outcome, a.Attempt, a.CreatedAt)
	return translate(err)
}

// WebhookEndpoints lists every endpoint's delivery state.
func (s *Store) WebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints ORDER BY name`)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookEndpoint, error) { return scanEndpoint(r) })
}

// WebhookAttempts returns up to limit log lines, newest first, of one
// endpoint ("" for all), with id < before (0: from the newest).
func (s *Store) WebhookAttempts(ctx context.Context, endpoint string, before int64, limit int) ([]WebhookAttempt, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, endpoint, event_seq, event_id, status_code, error, duration_ms, outcome, attempt, created_at
		FROM webhook_attempts WHERE ($1 = '' OR endpoint = $1) AND ($2 = 0 OR id < $2) ORDER BY id DESC LIMIT $3`, endpoint, before, limit)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookAttempt, error) {
		var a WebhookAttempt
		err := r.Scan(&a.ID, &a.Endpoint, &a.EventSeq, &a.EventID, &a.StatusCode, &a.Error, &a.DurationMS, &a.Outcome, &a.Attempt, &a.CreatedAt)
		return a, err
	})
}

// RedeliverWebhook moves an endpoint's cursor back so that every event from
// fromSeq on is delivered again (at least once: receivers dedupe on the
// event id), clears its retry state, logs the operator's action and wakes
// the senders. It waits for a delivery in flight to finish. Moving the
// cursor forward (skipping events) is refused.
func (s *Store) RedeliverWebhook(ctx context.Context, name string, fromSeq int64, now time.Time) (WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		e, err = scanEndpoint(tx.tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE name = $1 FOR UPDATE`, name))
		if err != nil {
			return err
		}
		if fromSeq < 1 || fromSeq-1 > e.LastSeq {
			return fmt.Errorf("%w: --from-seq must be between 1 and %d (the endpoint's next event); redelivery only moves the cursor back",
				ErrCheck, e.LastSeq+1)
		}
		e.LastSeq, e.Attempts, e.NextAttemptAt, e.FirstFailedAt, e.LastError, e.UpdatedAt = fromSeq-1, 0, nil, nil, "", now
		if err := tx.SaveEndpoint(ctx, e); err != nil {
			return err
		}
		if err := tx.LogAttempt(ctx, WebhookAttempt{Endpoint: name, EventSeq: fromSeq, EventID: "",
			Error: fmt.Sprintf("operator moved the cursor back to redeliver from seq %d", fromSeq), Outcome: "redeliver", Attempt: 0, CreatedAt: now}); err != nil {
			return err
		}
		_, err = tx.tx.Exec(ctx, `SELECT pg_notify($1, '0')`, EventsChannel)
		return translate(err)
	})
	return e, err
}
