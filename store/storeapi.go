package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The queries of the HTTP API's store boundary (issue 34): the event feed,
// the webhook admin routes and the stores routes read one store's rows
// through these.

// EventsAfterIn is EventsAfter for the events of shop only ("": every
// store's): a store's feed is read in the query, so a page is never empty
// because of another store's traffic.
func (s *Store) EventsAfterIn(ctx context.Context, shop string, after int64, types []string, limit int) ([]Event, error) {
	if shop == "" {
		return s.EventsAfter(ctx, after, types, limit)
	}
	return collectEvents(s.pool.Query(ctx, eventsAfterPrefixSQL, after, types, limit, "", shop))
}

// EventSeqOf is EventSeqByID for an event of shop ("": any store's):
// another store's event id is ErrNotFound, as an unknown one.
func (s *Store) EventSeqOf(ctx context.Context, shop, id string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM events WHERE id = $1 AND ($2 = '' OR store_id = $2)`, id, shop).Scan(&seq)
	return seq, translate(err)
}

// WebhookEndpointsOf is WebhookEndpoints of the endpoints that hear only
// shop's events ("": every endpoint). An every-store endpoint (store_id
// NULL) is the operator's, and not shop's.
func (s *Store) WebhookEndpointsOf(ctx context.Context, shop string) ([]WebhookEndpoint, error) {
	if shop == "" {
		return s.WebhookEndpoints(ctx)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE store_id = $1 ORDER BY name`, shop)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookEndpoint, error) { return scanEndpoint(r) })
}

// WebhookAttemptsOf is WebhookAttempts of the endpoints of shop only ("":
// every endpoint's), as WebhookEndpointsOf selects them.
func (s *Store) WebhookAttemptsOf(ctx context.Context, shop, endpoint string, before int64, limit int) ([]WebhookAttempt, error) {
	if shop == "" {
		return s.WebhookAttempts(ctx, endpoint, before, limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT a.id, a.endpoint, a.event_seq, a.event_id, a.status_code, a.error, a.duration_ms, a.outcome, a.attempt, a.created_at
		FROM webhook_attempts a JOIN webhook_endpoints e ON e.name = a.endpoint AND e.store_id = $4
		WHERE ($1 = '' OR a.endpoint = $1) AND ($2 = 0 OR a.id < $2) ORDER BY a.id DESC LIMIT $3`, endpoint, before, limit, shop)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookAttempt, error) {
		var a WebhookAttempt
		err := r.Scan(&a.ID, &a.Endpoint, &a.EventSeq, &a.EventID, &a.StatusCode, &a.Error, &a.DurationMS, &a.Outcome, &a.Attempt, &a.CreatedAt)
		return a, err
	})
}

// StoreAPIKeyByName returns the active key of shop named name.
func (s *Store) StoreAPIKeyByName(ctx context.Context, shop, name string) (APIKey, error) {
	var k APIKey
	err := s.pool.QueryRow(ctx, `SELECT id, name, scopes, created_at, revoked_at, coalesce(account_prefix, ''), coalesce(store_id, '') FROM api_keys
		WHERE store_id = $1 AND name = $2 AND revoked_at IS NULL`, shop, name).Scan(&k.ID, &k.Name, &k.Scopes, &k.CreatedAt, &k.RevokedAt, &k.AccountPrefix, &k.Store)
	return k, translate(err)
}

// RotateStoreAPIKey creates a new key of shop with the scopes and account
// prefix of its active key named name, under the same name, and revokes
// the old one, in one transaction: from its commit on, the old key is
// refused. It returns the new key's plaintext (shown once) and the key.
// No active key of that name in shop is ErrNotFound.
func (s *Store) RotateStoreAPIKey(ctx context.Context, shop, name string, now time.Time) (string, APIKey, error) {
	plain, err := newPlainKey()
	if err != nil {
		return "", APIKey{}, err
	}
	var k APIKey
	err = s.InTx(ctx, func(tx *Tx) error {
		var old APIKey
		err := tx.tx.QueryRow(ctx, `SELECT id, scopes, coalesce(account_prefix, '') FROM api_keys
			WHERE store_id = $1 AND name = $2 AND revoked_at IS NULL FOR UPDATE`, shop, name).Scan(&old.ID, &old.Scopes, &old.AccountPrefix)
		if err != nil {
			return translate(err)
		}
		// Names are unique across every key, revoked ones too: the old
		// key keeps its row (and what refers to it) as NAME.<its id>.
		if _, err := tx.tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $2, name = left(name, 60) || '.' || id WHERE id = $1`, old.ID, now); err != nil {
			return translate(err)
		}
		k = APIKey{ID: NewID("key"), Name: name, Scopes: old.Scopes, CreatedAt: now, AccountPrefix: old.AccountPrefix, Store: shop}
		_, err = tx.tx.Exec(ctx, `INSERT INTO api_keys (id, name, hash, scopes, created_at, account_prefix, store_id) VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), $7)`,
			k.ID, name, HashAPIKey(plain), k.Scopes, now, k.AccountPrefix, shop)
		return translate(err)
	})
	if err != nil {
		return "", APIKey{}, err
	}
	return plain, k, nil
}

// newPlainKey is a new API key's plaintext, as CreateStoreAPIKey makes it.
func newPlainKey() (string, error) {
	var raw [20]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	return "pw_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:])), nil
}
