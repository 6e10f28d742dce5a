package store

import (
	"context"
	"time"
)

// RotateAPIKey replaces the active key called name by a new one with the
// same name, scopes, account prefix and store, in one transaction: the old
// key is revoked and renamed NAME.<its id> (names are unique), as
// RotateStoreAPIKey does, so the new one keeps the name finance decisions
// are filed under. Any key, an every-store one too (the operator's
// command). It returns the new key's secret, once. No active key of that
// name is ErrNotFound.
func (s *Store) RotateAPIKey(ctx context.Context, name string, now time.Time) (string, APIKey, error) {
	plain, err := newPlainKey()
	if err != nil {
		return "", APIKey{}, err
	}
	var k APIKey
	err = s.InTx(ctx, func(tx *Tx) error {
		var old APIKey
		err := tx.tx.QueryRow(ctx, `SELECT id, scopes, coalesce(account_prefix, ''), coalesce(store_id, '') FROM api_keys
			WHERE name = $1 AND revoked_at IS NULL FOR UPDATE`, name).Scan(&old.ID, &old.Scopes, &old.AccountPrefix, &old.Store)
		if err != nil {
			return translate(err)
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $2, name = left(name, 60) || '.' || id WHERE id = $1`, old.ID, now); err != nil {
			return translate(err)
		}
		k = APIKey{ID: NewID("key"), Name: name, Scopes: old.Scopes, CreatedAt: now, AccountPrefix: old.AccountPrefix, Store: old.Store}
		_, err = tx.tx.Exec(ctx, `INSERT INTO api_keys (id, name, hash, scopes, created_at, account_prefix, store_id) VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), NULLIF($7, ''))`,
			k.ID, name, HashAPIKey(plain), k.Scopes, now, k.AccountPrefix, k.Store)
		return translate(err)
	})
	if err != nil {
		return "", APIKey{}, err
	}
	return plain, k, nil
}

// PoolLaneRemaining counts the free addresses of a pool lane (PoolLane).
func (s *Store) PoolLaneRemaining(ctx context.Context, network, lane string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM free_addresses WHERE network = $1 AND lane = $2`, network, lane).Scan(&n)
	return n, translate(err)
}

// AddressOwners returns, of keys, those the network watches already, by
// address, with the store they belong to.
func (s *Store) AddressOwners(ctx context.Context, network string, keys [][]byte) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT address, store_id FROM addresses WHERE network = $1 AND key = ANY($2)`, network, keys)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var a, st string
		if err := rows.Scan(&a, &st); err != nil {
			return nil, translate(err)
		}
		out[a] = st
	}
	return out, translate(rows.Err())
}
