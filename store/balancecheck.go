package store

import (
	"context"
	"math/big"
	"time"
)

// OpenAddress is the address of an intent still waiting for money.
type OpenAddress struct {
	IntentID              string
	Address               string
	Key                   []byte
	ConfirmationsRequired int
}

// OpenAddresses returns the addresses of network's open intents
// (awaiting_payment, detected), for the Ethereum balance check.
func (s *Store) OpenAddresses(ctx context.Context, network string) ([]OpenAddress, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, address, address_key, confirmations_required FROM intents
		WHERE network = $1 AND status IN ('awaiting_payment', 'detected') ORDER BY id`, network)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []OpenAddress
	for rows.Next() {
		var a OpenAddress
		if err := rows.Scan(&a.IntentID, &a.Address, &a.Key, &a.ConfirmationsRequired); err != nil {
			return nil, translate(err)
		}
		out = append(out, a)
	}
	return out, translate(rows.Err())
}

// RecordedSums sums the recorded, non-orphaned transfers of asset to each of
// keys in blocks up to height, by key (0 for a key with none).
func (s *Store) RecordedSums(ctx context.Context, network, asset string, keys [][]byte, height int64) (map[string]*big.Int, error) {
	rows, err := s.pool.Query(ctx, `SELECT address_key, sum(amount)::text FROM transfers
		WHERE network = $1 AND asset = $2 AND status <> 'orphaned' AND block_height <= $3 AND address_key = ANY($4)
		GROUP BY address_key`, network, asset, height, keys)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := make(map[string]*big.Int, len(keys))
	for _, k := range keys {
		out[string(k)] = new(big.Int)
	}
	for rows.Next() {
		var key []byte
		var sum string
		if err := rows.Scan(&key, &sum); err != nil {
			return nil, translate(err)
		}
		v, err := parseNum(sum)
		if err != nil {
			return nil, err
		}
		out[string(key)] = v
	}
	return out, translate(rows.Err())
}

// BlockWithTime returns the stored block ref at height and its time (nil
// when unknown).
func (s *Store) BlockWithTime(ctx context.Context, network string, height int64) (BlockRef, *time.Time, error) {
	var b BlockRef
	var at *time.Time
	err := s.pool.QueryRow(ctx, `SELECT height, hash, parent_hash, time FROM blocks WHERE network = $1 AND height = $2`, network, height).
		Scan(&b.Height, &b.Hash, &b.Parent, &at)
	return b, at, translate(err)
}
