package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// PoolStat is one network's address supply (issue 22, item 5).
type PoolStat struct {
	Network string
	// Free is how many addresses are ready to hand out (the free queue: a
	// Solana pool's imported addresses, a derived network's look-ahead).
	Free int64
	// Gap is how many derived addresses were handed out after the last one
	// that received a payment: a wallet that stops looking after its gap
	// limit (BIP-44: 20) of unused addresses misses payments beyond it. 0
	// for networks without derivation.
	Gap int64
}

// AddressPoolStats returns the supply of every network with addresses. It
// reads the free queue, the newest derived address not free (handed out:
// the look-ahead above it is free) and the addresses paid; a caller
// serving it on each scrape caches it.
func (s *Store) AddressPoolStats(ctx context.Context) ([]PoolStat, error) {
	rows, err := s.pool.Query(ctx, `
		WITH nets AS (SELECT DISTINCT network FROM addresses),
		free AS (SELECT network, count(*) AS n FROM free_addresses GROUP BY network),
		handed AS (SELECT n.network, (SELECT a.derivation_index FROM addresses a
				WHERE a.network = n.network AND a.derivation_index IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM free_addresses f WHERE f.network = a.network AND f.key = a.key)
				ORDER BY a.derivation_index DESC LIMIT 1) AS i FROM nets n),
		paid AS (SELECT a.network, max(a.derivation_index) AS i FROM transfers t
			JOIN addresses a ON a.network = t.network AND a.key = t.address_key
			WHERE a.derivation_index IS NOT NULL GROUP BY a.network)
		SELECT n.network, coalesce(f.n, 0),
			CASE WHEN h.i IS NULL THEN 0 ELSE greatest(h.i - coalesce(p.i, -1), 0) END
		FROM nets n LEFT JOIN free f USING (network) LEFT JOIN handed h USING (network) LEFT JOIN paid p USING (network)
		ORDER BY n.network`)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PoolStat, error) {
		var p PoolStat
		err := r.Scan(&p.Network, &p.Free, &p.Gap)
		return p, err
	})
	return out, translate(err)
}
