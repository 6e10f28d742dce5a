package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrClaimLost is returned by RecordAttempt when the sender's claim on the
// endpoint was taken over (it expired) or revoked (an operator redelivered):
// the attempt is logged, the delivery state is left to the new holder.
var ErrClaimLost = errors.New("webhook claim was taken over")

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
	// ClaimToken and ClaimedUntil name the sender delivering the endpoint
	// and until when (both empty when none is).
	ClaimToken   string
	ClaimedUntil *time.Time
	// Store is the store whose events the endpoint hears ("": every
	// store's).
	Store string
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

const endpointColumns = `name, url, last_seq, attempts, next_attempt_at, first_failed_at, last_error, updated_at,
	coalesce(claim_token, ''), claimed_until, coalesce(store_id, '')`

func scanEndpoint(row pgx.Row) (WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := row.Scan(&e.Name, &e.URL, &e.LastSeq, &e.Attempts, &e.NextAttemptAt, &e.FirstFailedAt, &e.LastError, &e.UpdatedAt,
		&e.ClaimToken, &e.ClaimedUntil, &e.Store)
	return e, translate(err)
}

// EnsureWebhookEndpoint creates the endpoint's state row or updates its
// URL and store (shop: the store whose events it hears, "" for every
// store's; the store must exist). A new endpoint's cursor is 0 (every event
// in the table will be delivered), or the newest event's seq when startNow
// (only events from now on). An existing endpoint keeps its cursor.
func (s *Store) EnsureWebhookEndpoint(ctx context.Context, name, url, shop string, startNow bool, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_endpoints (name, url, last_seq, updated_at, store_id)
		VALUES ($1, $2, CASE WHEN $4 THEN coalesce((SELECT max(seq) FROM events), 0) ELSE 0 END, $3, NULLIF($5, ''))
		ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url, store_id = EXCLUDED.store_id
		WHERE webhook_endpoints.url <> EXCLUDED.url OR webhook_endpoints.store_id IS DISTINCT FROM EXCLUDED.store_id`,
		name, url, now, startNow, shop)
	return translate(err)
}

// SaveEndpoint writes the endpoint's delivery state, its claim included.
func (t *Tx) SaveEndpoint(ctx context.Context, e WebhookEndpoint) error {
	_, err := t.tx.Exec(ctx, `UPDATE webhook_endpoints SET last_seq = $2, attempts = $3, next_attempt_at = $4,
		first_failed_at = $5, last_error = $6, updated_at = $7, claim_token = nullif($8, ''), claimed_until = $9 WHERE name = $1`,
		e.Name, e.LastSeq, e.Attempts, e.NextAttemptAt, e.FirstFailedAt, e.LastError, e.UpdatedAt, e.ClaimToken, e.ClaimedUntil)
	return translate(err)
}

// Claim is a sender's hold on an endpoint's next events, committed before
// it POSTs them.
type Claim struct {
	Endpoint WebhookEndpoint
	// Token identifies the holder in RecordAttempt.
	Token string
	// Until is when the claim expires and another sender may take over.
	Until time.Time
	// Events are the events to deliver, in seq order.
	Events []Event
}

// ClaimOutcome says why ClaimWebhookEvents claimed nothing.
type ClaimOutcome int

// The outcomes of ClaimWebhookEvents.
const (
	// Claimed: the claim holds events to deliver.
	Claimed ClaimOutcome = iota
	// ClaimBusy: another sender's claim is live until Endpoint.ClaimedUntil.
	ClaimBusy
	// ClaimRetryLater: the next event waits for its retry at
	// Endpoint.NextAttemptAt.
	ClaimRetryLater
	// ClaimNothingDue: every event is delivered.
	ClaimNothingDue
)

// ClaimWebhookEvents claims up to limit events of the endpoint after its
// cursor, of the given types (all when empty), until now+hold, and commits:
// the caller POSTs them outside any transaction and records each with
// RecordAttempt. Nothing is claimed while another sender's claim is live
// (an expired one is taken over: its events are sent again) or while the
// next event waits for a retry.
//
// prefix limits the events to accounts starting with it, shop to the
// events of that store ("" for either: no limit).
func (s *Store) ClaimWebhookEvents(ctx context.Context, name string, types []string, prefix, shop string, limit int, hold time.Duration, now time.Time) (Claim, ClaimOutcome, error) {
	var c Claim
	var out ClaimOutcome
	err := s.InTx(ctx, func(tx *Tx) error {
		c, out = Claim{}, Claimed
		e, err := scanEndpoint(tx.tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE name = $1 FOR UPDATE`, name))
		if err != nil {
			return err
		}
		c.Endpoint = e
		switch {
		case e.ClaimedUntil != nil && now.Before(*e.ClaimedUntil):
			out = ClaimBusy
			return nil
		case e.NextAttemptAt != nil && now.Before(*e.NextAttemptAt):
			out = ClaimRetryLater
			return nil
		}
		if c.Events, err = collectEvents(tx.tx.Query(ctx, eventsAfterPrefixSQL, e.LastSeq, types, limit, prefix, shop)); err != nil {
			return err
		}
		if len(c.Events) == 0 {
			out = ClaimNothingDue
			if e.ClaimToken != "" { // an expired claim with nothing left
				e.ClaimToken, e.ClaimedUntil = "", nil
				c.Endpoint = e
				return tx.SaveEndpoint(ctx, e)
			}
			return nil
		}
		c.Token, c.Until = NewID("wc"), now.Add(hold)
		e.ClaimToken, e.ClaimedUntil = c.Token, &c.Until
		c.Endpoint = e
		return tx.SaveEndpoint(ctx, e)
	})
	return c, out, err
}

// ReleaseWebhookClaim gives up the claim token on the endpoint without
// recording anything (a sender shutting down mid-delivery): the claimed
// events are sent again by the next sender at once. A claim no longer the
// endpoint's is left alone.
func (s *Store) ReleaseWebhookClaim(ctx context.Context, name, token string) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_endpoints SET claim_token = NULL, claimed_until = NULL
		WHERE name = $1 AND claim_token = $2`, name, token)
	return translate(err)
}

// RecordAttempt logs one delivery attempt made under the claim token and,
// in the same statement (its own transaction), while the claim is still
// the endpoint's, writes the endpoint's new delivery state e (its cursor, retry state and claim: keep the token to
// go on with the claim's next event, clear it to release). When the claim
// was taken over or revoked the attempt is logged, e is not written, and
// the error is ErrClaimLost.
func (s *Store) RecordAttempt(ctx context.Context, token string, e WebhookEndpoint, a WebhookAttempt) error {
	// One statement, so one round trip: the UPDATE takes the row lock and
	// checks the token under it; the log line is written either way.
	var held bool
	err := s.pool.QueryRow(ctx, `WITH upd AS (
			UPDATE webhook_endpoints SET last_seq = $2, attempts = $3, next_attempt_at = $4, first_failed_at = $5, last_error = $6,
				updated_at = $7, claim_token = nullif($8, ''), claimed_until = $9
			WHERE name = $1 AND claim_token = $10 RETURNING 1),
		ins AS (INSERT INTO webhook_attempts (endpoint, event_seq, event_id, status_code, error, duration_ms, outcome, attempt, created_at)
			VALUES ($1, $11, $12, $13, $14, $15, $16, $17, $18))
		SELECT EXISTS (SELECT 1 FROM upd)`,
		e.Name, e.LastSeq, e.Attempts, e.NextAttemptAt, e.FirstFailedAt, e.LastError, e.UpdatedAt, e.ClaimToken, e.ClaimedUntil, token,
		a.EventSeq, a.EventID, a.StatusCode, a.Error, a.DurationMS, a.Outcome, a.Attempt, a.CreatedAt).Scan(&held)
	if err != nil {
		return translate(err)
	}
	if !held {
		return fmt.Errorf("endpoint %s: %w", e.Name, ErrClaimLost)
	}
	return nil
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
// event id), clears its retry state and any sender's claim (a delivery in
// flight is not recorded: its event is among those sent again), logs the
// operator's action and wakes the senders. Moving the cursor forward
// (skipping events) is refused.
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
		e.ClaimToken, e.ClaimedUntil = "", nil
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
