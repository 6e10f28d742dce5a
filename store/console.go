package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/payment"
)

// ConsoleSession is a signed-in browser session of the console and the API
// key it acts as.
type ConsoleSession struct {
	// ID names the session (ConsoleSessionID of its token) without being
	// its secret.
	ID         string
	Key        APIKey
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastSeenAt time.Time
}

func secretHash(plain string) []byte {
	h := sha256.Sum256([]byte(plain))
	return h[:]
}

// ConsoleSessionID is the public id of the session of token: "cs_" and the
// hex of the first 10 bytes of the token's SHA-256 (migration 0024).
func ConsoleSessionID(token string) string {
	return "cs_" + hex.EncodeToString(secretHash(token)[:10])
}

// CreateConsoleSession stores the hash of a new session token for key.
func (s *Store) CreateConsoleSession(ctx context.Context, token, keyID string, now, expires time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO console_sessions (hash, id, api_key_id, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $4, $5)`, secretHash(token), ConsoleSessionID(token), keyID, now, expires)
	return translate(err)
}

const sessionColumns = `c.id, k.id, k.name, k.scopes, k.created_at, k.revoked_at, c.created_at, c.expires_at, c.last_seen_at,
	coalesce(k.store_id, '')`

func scanSession(row pgx.Row) (ConsoleSession, error) {
	var cs ConsoleSession
	err := row.Scan(&cs.ID, &cs.Key.ID, &cs.Key.Name, &cs.Key.Scopes, &cs.Key.CreatedAt, &cs.Key.RevokedAt, &cs.CreatedAt, &cs.ExpiresAt, &cs.LastSeenAt,
		&cs.Key.Store)
	return cs, err
}

// ConsoleSessionByToken returns the live session of token: not expired at
// now, and its API key not revoked. Anything else is ErrNotFound. Whether
// it has been idle too long is the caller's rule (LastSeenAt).
func (s *Store) ConsoleSessionByToken(ctx context.Context, token string, now time.Time) (ConsoleSession, error) {
	cs, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+`
		FROM console_sessions c JOIN api_keys k ON k.id = c.api_key_id
		WHERE c.hash = $1 AND c.expires_at > $2 AND k.revoked_at IS NULL`, secretHash(token), now))
	return cs, translate(err)
}

// TouchConsoleSession records a use of the session of token at now (never
// moving its last use back).
func (s *Store) TouchConsoleSession(ctx context.Context, token string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE console_sessions SET last_seen_at = $2 WHERE hash = $1 AND last_seen_at < $2`,
		secretHash(token), now)
	return translate(err)
}

// ConsoleSessions lists the sessions not expired at now, newest first.
func (s *Store) ConsoleSessions(ctx context.Context, now time.Time) ([]ConsoleSession, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sessionColumns+`
		FROM console_sessions c JOIN api_keys k ON k.id = c.api_key_id
		WHERE c.expires_at > $1 ORDER BY c.created_at DESC, c.id`, now)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ConsoleSession, error) { return scanSession(r) })
	return out, translate(err)
}

// EndConsoleSession ends the session id (ErrNotFound when there is none).
func (s *Store) EndConsoleSession(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM console_sessions WHERE id = $1`, id)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteConsoleSession ends a session (sign-out) and drops sessions that
// expired before now. Deleting an unknown session is not an error.
func (s *Store) DeleteConsoleSession(ctx context.Context, token string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM console_sessions WHERE hash = $1 OR expires_at <= $2`, secretHash(token), now)
	return translate(err)
}

// CreateSignInToken stores the hash of a one-time sign-in token for key.
func (s *Store) CreateSignInToken(ctx context.Context, token, keyID string, now, expires time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO console_signin_tokens (hash, api_key_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		secretHash(token), keyID, now, expires)
	return translate(err)
}

// UseSignInToken consumes a one-time sign-in token and returns its key. A
// token that is unknown, expired, already used or whose key is revoked is
// ErrNotFound; a token is consumed at most once even under concurrency.
func (s *Store) UseSignInToken(ctx context.Context, token string, now time.Time) (APIKey, error) {
	var k APIKey
	err := s.pool.QueryRow(ctx, `WITH used AS (
			UPDATE console_signin_tokens SET used_at = $2
			WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING api_key_id)
		SELECT k.id, k.name, k.scopes, k.created_at, k.revoked_at, coalesce(k.store_id, '') FROM used JOIN api_keys k ON k.id = used.api_key_id
		WHERE k.revoked_at IS NULL`, secretHash(token), now).Scan(&k.ID, &k.Name, &k.Scopes, &k.CreatedAt, &k.RevokedAt, &k.Store)
	return k, translate(err)
}

// IntentsByIDs returns the intents with the given ids (in no order); ids
// that do not exist are left out.
func (s *Store) IntentsByIDs(ctx context.Context, ids []string) ([]Intent, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+intentColumns+intentFrom+`WHERE i.id = ANY($1)`, ids)
	if err != nil {
		return nil, translate(err)
	}
	return scanIntents(rows)
}

// InboxCounts counts the inbox's transfers per classification, with the
// same selection as InboxTransfers (status, network, age; not the
// classification, whose counts these are).
func (s *Store) InboxCounts(ctx context.Context, f InboxFilter) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT t.classification, count(*)`+transferFrom+`
		WHERE `+inboxSelection(f.Status)+` AND $1 <> ''
		AND ($2 = '' OR t.network = $2)
		AND ($3::timestamptz IS NULL OR t.first_seen_at >= $3) AND ($4::timestamptz IS NULL OR t.first_seen_at < $4)
		AND ($5 = '' OR t.store_id = $5)
		GROUP BY t.classification`, f.Status, f.Network, f.SeenAfter, f.SeenBefore, f.Store)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var c string
		var n int64
		if err := rows.Scan(&c, &n); err != nil {
			return nil, translate(err)
		}
		out[c] = n
	}
	return out, translate(rows.Err())
}

// EventsOfIntent returns the events about an intent or about one of the
// given transfers, in seq order (at most limit).
func (s *Store) EventsOfIntent(ctx context.Context, intentID string, transferIDs []string, limit int) ([]Event, error) {
	// Two index lookups (console_events_intent, console_events_transfer)
	// rather than one OR that the planner may turn into a scan of the feed.
	return collectEvents(s.pool.Query(ctx, `SELECT seq, id, type, coalesce(intent_id, ''), coalesce(transfer_id, ''),
		coalesce(account, ''), store_id, data, created_at FROM events WHERE seq IN (
			SELECT seq FROM events WHERE intent_id = $1 UNION SELECT seq FROM events WHERE transfer_id = ANY($2))
		ORDER BY seq LIMIT $3`, intentID, transferIDs, limit))
}

// SearchHit is one thing a console search matched.
type SearchHit struct {
	// Kind is intent, transfer, payable or account.
	Kind string
	// ID is the intent or transfer id, the payable's "kind/reference", or
	// the account.
	ID string
	// Detail says what matched (address, txid, reference…).
	Detail string
	// Store is the store of what matched.
	Store string
}

// networks is every network, as text: an address is unique per network,
// and the (network, address) index finds one given its network.
func networks() []string {
	out := make([]string, len(payment.Networks))
	for i, n := range payment.Networks {
		out[i] = string(n)
	}
	return out
}

// Search finds what q names exactly: an intent id or address, a transfer id
// or txid, a payable reference, or an account (at most 50 hits), of shop
// ("" for every store).
func (s *Store) Search(ctx context.Context, shop, q string) ([]SearchHit, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, id, detail, store_id FROM (
		(SELECT 'intent' AS kind, id, 'intent id' AS detail, store_id FROM intents WHERE id = $1)
		UNION ALL (SELECT 'intent', id, 'address ' || address, store_id FROM intents WHERE network = ANY($2) AND address = $1
			AND ($3 = '' OR store_id = $3) ORDER BY created_at DESC LIMIT 20)
		UNION ALL (SELECT 'transfer', id, 'transfer id', store_id FROM transfers WHERE id = $1)
		UNION ALL (SELECT 'transfer', id, 'txid on ' || network, store_id FROM transfers WHERE txid = $1
			AND ($3 = '' OR store_id = $3) ORDER BY created_at DESC LIMIT 20)
		UNION ALL (SELECT 'payable', kind || '/' || reference, kind || ' reference', store_id FROM payables WHERE reference = $1)
		UNION ALL (SELECT 'account', account, 'account', store_id FROM accounts WHERE account = $1)
		UNION ALL (SELECT DISTINCT 'account', p.account, 'account of a payable', p.store_id FROM payables p WHERE p.account = $1
			AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.store_id = p.store_id AND a.account = $1))
		) hits WHERE $3 = '' OR store_id = $3
		LIMIT 50`, q, networks(), shop)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SearchHit, error) {
		var h SearchHit
		err := r.Scan(&h.Kind, &h.ID, &h.Detail, &h.Store)
		return h, err
	})
}

// EventCountAfter counts events with seq > after, optionally only of the
// given types and of one store (shop; "" for every store's): a webhook
// endpoint's backlog.
func (s *Store) EventCountAfter(ctx context.Context, after int64, types []string, shop string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE seq > $1
		AND (coalesce(cardinality($2::text[]), 0) = 0 OR type = ANY($2)) AND ($3 = '' OR store_id = $3)`, after, types, shop).Scan(&n)
	return n, translate(err)
}

// LastEventSeq returns the seq of the newest event (0 when there is none).
func (s *Store) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq)
	return seq, translate(err)
}

// LastStoreEventSeq returns the seq of the newest event of shop (0 when it
// has none): what a store's console refreshes on, without learning how
// many events other stores have.
func (s *Store) LastStoreEventSeq(ctx context.Context, shop string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE store_id = $1`, StoreOr(shop)).Scan(&seq)
	return seq, translate(err)
}

// AccountSummary is one account on the console's balances list.
type AccountSummary struct {
	Store        string
	Account      string
	BalanceCents int64
	// UpdatedAt is the account's last ledger change; nil for an account
	// known only from a payable (no entry yet).
	UpdatedAt *time.Time
}

// Accounts lists up to limit accounts of shop ("" for every store's), by
// name (then store), whose name contains q (case-insensitive; "" for all):
// those with ledger entries and those known only from a top-up or order
// payable.
func (s *Store) Accounts(ctx context.Context, shop, q string, limit int) ([]AccountSummary, error) {
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
	rows, err := s.pool.Query(ctx, `
		SELECT store_id, account, balance_cents, updated_at FROM (
			SELECT store_id, account, balance_cents, updated_at FROM accounts
			UNION ALL
			SELECT DISTINCT p.store_id, p.account, 0, NULL::timestamptz FROM payables p
			WHERE p.account IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.store_id = p.store_id AND a.account = p.account)
		) x WHERE account ILIKE $1 AND ($3 = '' OR store_id = $3) ORDER BY account, store_id LIMIT $2`, pattern, limit, shop)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AccountSummary, error) {
		var a AccountSummary
		err := r.Scan(&a.Store, &a.Account, &a.BalanceCents, &a.UpdatedAt)
		return a, err
	})
}

// EventTypes returns the type of each event id given (ids that are not
// events are left out), for the console's webhook log.
func (s *Store) EventTypes(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, type FROM events WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, typ string
		if err := rows.Scan(&id, &typ); err != nil {
			return nil, translate(err)
		}
		out[id] = typ
	}
	return out, translate(rows.Err())
}

// ShopCount counts the stores (1 on an instance of one shop: the default
// store).
func (s *Store) ShopCount(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM stores`).Scan(&n)
	return n, translate(err)
}
