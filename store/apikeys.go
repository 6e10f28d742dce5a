package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"
)

// APIKey is a stored API key: only its SHA-256 hash is kept.
type APIKey struct {
	ID        string
	Name      string
	Scopes    []string
	CreatedAt time.Time
	RevokedAt *time.Time
	// AccountPrefix binds the key to the accounts that start with it ("":
	// not bound).
	AccountPrefix string
	// Store is the store the key belongs to ("": every store, an
	// operator's key). A store's key never sees another store's data.
	Store string
}

// Sees reports whether the key may see the data of store: it belongs to
// every store, or to that one.
func (k APIKey) Sees(store string) bool {
	return k.Store == "" || k.Store == StoreOr(store)
}

// StoreFor is the store a storefront request of the key acts in: the
// key's own store, else (an every-store key) the store it asked for, else
// the default store.
func (k APIKey) StoreFor(asked string) string {
	if k.Store != "" {
		return k.Store
	}
	return StoreOr(asked)
}

// The storefront scopes: storefront grants read, intents and debit.
const (
	ScopeStorefront = "storefront"
	ScopeRead       = "read"
	ScopeIntents    = "intents"
	ScopeDebit      = "debit"
)

// Grants reports whether the key may do what scope allows: it carries
// scope, or scope is read, intents or debit and it carries storefront.
func (k APIKey) Grants(scope string) bool {
	if k.HasScope(scope) {
		return true
	}
	switch scope {
	case ScopeRead, ScopeIntents, ScopeDebit:
		return k.HasScope(ScopeStorefront)
	}
	return false
}

// Covers reports whether the key may see account: it is not bound, or
// account starts with its prefix (an empty account is no one's, so a bound
// key never covers it).
func (k APIKey) Covers(account string) bool {
	return k.AccountPrefix == "" || (account != "" && strings.HasPrefix(account, k.AccountPrefix))
}

// HasScope reports whether the key carries scope.
func (k APIKey) HasScope(scope string) bool {
	for _, s := range k.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// HashAPIKey returns the stored form of a plaintext key. Keys carry 160 bits
// of randomness, so a plain SHA-256 is enough (no password stretching).
func HashAPIKey(plain string) []byte {
	h := sha256.Sum256([]byte(plain))
	return h[:]
}

// CreateAPIKey stores a new key and returns its plaintext, which is never
// stored and cannot be shown again. A name in use is ErrConflict.
func (s *Store) CreateAPIKey(ctx context.Context, name string, scopes []string, now time.Time) (string, APIKey, error) {
	return s.CreateBoundAPIKey(ctx, name, scopes, "", now)
}

// CreateBoundAPIKey is CreateAPIKey for a key bound to the accounts that
// start with prefix ("": not bound).
func (s *Store) CreateBoundAPIKey(ctx context.Context, name string, scopes []string, prefix string, now time.Time) (string, APIKey, error) {
	return s.CreateStoreAPIKey(ctx, name, scopes, "", prefix, now)
}

// CreateStoreAPIKey is CreateBoundAPIKey for a key of one store (shop ""
// : every store). An unknown store is ErrNotFound.
func (s *Store) CreateStoreAPIKey(ctx context.Context, name string, scopes []string, shop, prefix string, now time.Time) (string, APIKey, error) {
	var raw [20]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", APIKey{}, err
	}
	plain := "pw_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	k := APIKey{ID: NewID("key"), Name: name, Scopes: scopes, CreatedAt: now, AccountPrefix: prefix, Store: shop}
	_, err := s.pool.Exec(ctx, `INSERT INTO api_keys (id, name, hash, scopes, created_at, account_prefix, store_id) VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), NULLIF($7, ''))`,
		k.ID, name, HashAPIKey(plain), scopes, now, prefix, shop)
	if err != nil {
		return "", APIKey{}, translate(err)
	}
	return plain, k, nil
}

// APIKeyByPlain finds the active key whose hash matches plain.
func (s *Store) APIKeyByPlain(ctx context.Context, plain string) (APIKey, error) {
	var k APIKey
	err := s.pool.QueryRow(ctx, `SELECT id, name, scopes, created_at, revoked_at, coalesce(account_prefix, ''), coalesce(store_id, '') FROM api_keys
		WHERE hash = $1 AND revoked_at IS NULL`, HashAPIKey(plain)).Scan(&k.ID, &k.Name, &k.Scopes, &k.CreatedAt, &k.RevokedAt, &k.AccountPrefix, &k.Store)
	return k, translate(err)
}

// RevokeAPIKey revokes the key named name.
func (s *Store) RevokeAPIKey(ctx context.Context, name string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL`, name, now)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// ListAPIKeys lists every key (without secrets).
func (s *Store) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, scopes, created_at, revoked_at, coalesce(account_prefix, ''), coalesce(store_id, '') FROM api_keys ORDER BY created_at`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []APIKey
	for rows.Next() {
		var k APIKey
		if err := rows.Scan(&k.ID, &k.Name, &k.Scopes, &k.CreatedAt, &k.RevokedAt, &k.AccountPrefix, &k.Store); err != nil {
			return nil, translate(err)
		}
		out = append(out, k)
	}
	return out, translate(rows.Err())
}

// IdempotentResponse is a stored response to a POST with an
// Idempotency-Key.
type IdempotentResponse struct {
	RequestHash []byte
	Status      int
	Body        []byte
}

// ClaimIdempotencyKey claims (apiKeyID, key) for this transaction. When the
// key was used before (by a committed transaction) it returns that
// response and claimed=false; a concurrent first use blocks until it ends.
func (t *Tx) ClaimIdempotencyKey(ctx context.Context, apiKeyID, key string, reqHash []byte, now time.Time) (prev IdempotentResponse, claimed bool, err error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status, response, created_at)
		VALUES ($1, $2, $3, 0, ''::bytea, $4) ON CONFLICT DO NOTHING`, apiKeyID, key, reqHash, now)
	if err != nil {
		return prev, false, translate(err)
	}
	if tag.RowsAffected() == 1 {
		return prev, true, nil
	}
	err = t.tx.QueryRow(ctx, `SELECT request_hash, status, response FROM idempotency_keys WHERE api_key_id = $1 AND key = $2`,
		apiKeyID, key).Scan(&prev.RequestHash, &prev.Status, &prev.Body)
	return prev, false, translate(err)
}

// SaveIdempotentResponse stores the response of a claimed key.
func (t *Tx) SaveIdempotentResponse(ctx context.Context, apiKeyID, key string, status int, body []byte) error {
	_, err := t.tx.Exec(ctx, saveIdempotentSQL, saveIdempotentArgs([]SavedResponse{{apiKeyID, key, status, body}})...)
	return translate(err)
}

// QueueSaveIdempotentResponse is SaveIdempotentResponse sent in one round
// trip with the transaction's next statement or its commit, whichever comes
// first; that call reports its failure.
func (t *Tx) QueueSaveIdempotentResponse(apiKeyID, key string, status int, body []byte) {
	t.QueueSaveIdempotentResponses([]SavedResponse{{apiKeyID, key, status, body}})
}

// IdempotentResponse returns the stored response of (apiKeyID, key), read
// outside any transaction: ErrNotFound when the key was never used, and
// Status 0 while its first request is still running.
func (s *Store) IdempotentResponse(ctx context.Context, apiKeyID, key string) (IdempotentResponse, error) {
	var r IdempotentResponse
	err := s.pool.QueryRow(ctx, `SELECT request_hash, status, response FROM idempotency_keys WHERE api_key_id = $1 AND key = $2`,
		apiKeyID, key).Scan(&r.RequestHash, &r.Status, &r.Body)
	return r, translate(err)
}
