package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Address is a watched address: derived (Source is the account key
// fingerprint, Index its position) or imported into a pool (Index -1).
type Address struct {
	// Store is the store whose key derived it or whose pool it is ("": the
	// default store).
	Store     string
	Network   string
	Key       []byte
	Address   string
	Source    string
	Index     int64
	IntentID  string
	CreatedAt time.Time
	// IntentConfirmations is the confirmations its intent requires (set by
	// AddressByKey when the address has an intent).
	IntentConfirmations int
	// Ahead is how many indexes of its source are derived above it (set by
	// TakeDerivedAddress): at most that many are still free, so a taker
	// knows when to replenish without counting the free ones.
	Ahead int64
}

// NextIndex hands out the next derivation index of (network, source). The
// counter row stays locked until the transaction ends, so concurrent intent
// creations never get the same index.
func (t *Tx) NextIndex(ctx context.Context, network, source string) (int64, error) {
	var next int64
	err := t.tx.QueryRow(ctx, `INSERT INTO derivation_counters (network, source, next_index) VALUES ($1, $2, 1)
		ON CONFLICT (network, source) DO UPDATE SET next_index = derivation_counters.next_index + 1
		RETURNING next_index - 1`, network, source).Scan(&next)
	return next, translate(err)
}

// PeekIndex returns the next index of (network, source) without taking it.
func (s *Store) PeekIndex(ctx context.Context, network, source string) (int64, error) {
	var next int64
	err := s.pool.QueryRow(ctx, `SELECT next_index FROM derivation_counters WHERE network = $1 AND source = $2`, network, source).Scan(&next)
	if err == pgx.ErrNoRows {
		return 0, nil
	}
	return next, translate(err)
}

// AddAddresses inserts watched addresses; existing ones are left as they
// are. It returns how many were new. All rows go in one statement (one
// round trip, however many rows).
func (t *Tx) AddAddresses(ctx context.Context, as []Address) (int, error) {
	if len(as) == 0 {
		return 0, nil
	}
	networks := make([]string, len(as))
	keys := make([][]byte, len(as))
	addrs := make([]string, len(as))
	sources := make([]string, len(as))
	idxs := make([]*int64, len(as))
	ats := make([]time.Time, len(as))
	stores := make([]string, len(as))
	for i := range as {
		a := &as[i]
		networks[i], keys[i], addrs[i], sources[i], ats[i] = a.Network, a.Key, a.Address, a.Source, a.CreatedAt
		stores[i] = StoreOr(a.Store)
		if a.Index >= 0 {
			idxs[i] = &a.Index
		}
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO addresses (network, key, address, source, derivation_index, created_at, store_id)
		SELECT network, key, address, source, derivation_index, created_at, store
		FROM unnest($1::text[], $2::bytea[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::text[])
			WITH ORDINALITY AS r (network, key, address, source, derivation_index, created_at, store, n)
		ORDER BY n
		ON CONFLICT DO NOTHING`, networks, keys, addrs, sources, idxs, ats, stores)
	if err != nil {
		return 0, translate(err)
	}
	return int(tag.RowsAffected()), nil
}

// AssignAddress hands a free derived address to an intent (which the
// caller inserts with it in the same transaction). It fails with
// ErrConflict when the address is not free.
func (t *Tx) AssignAddress(ctx context.Context, a Address) error {
	if a.Index < 0 {
		return fmt.Errorf("assign address %s: not a derived address", a.Address)
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM free_addresses WHERE network = $1 AND lane = $2 AND ord = $3 AND key = $4`,
		a.Network, a.Source, a.Index, a.Key)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() != 1 {
		return ErrConflict
	}
	return nil
}

// TakePoolAddress hands the oldest free pool address of network to an
// intent. ErrNotFound means the pool is empty.
func (t *Tx) TakePoolAddress(ctx context.Context, network, lane, intentID string) (Address, error) {
	var a Address
	err := t.tx.QueryRow(ctx, `WITH free AS (
			DELETE FROM free_addresses WHERE (network, lane, ord) = (
				SELECT network, lane, ord FROM free_addresses WHERE network = $1 AND lane = $2
				ORDER BY ord LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING key)
		SELECT a.network, a.key, a.address, a.source, a.created_at, a.store_id FROM free JOIN addresses a ON a.network = $1 AND a.key = free.key`,
		network, lane).
		Scan(&a.Network, &a.Key, &a.Address, &a.Source, &a.CreatedAt, &a.Store)
	a.Index, a.IntentID = -1, intentID
	return a, translate(err)
}

// VacuumFreeAddresses vacuums the queue of free addresses, so that a claim,
// which reads it from its lowest entry, does not step over the entries of
// every address claimed since autovacuum last came by. The queue holds
// about twice the gap per network: this is quick. A vacuum already running
// is left to finish.
func (s *Store) VacuumFreeAddresses(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `VACUUM (SKIP_LOCKED) free_addresses`)
	return translate(err)
}

// PoolRemaining counts free pool addresses of network.
func (s *Store) PoolRemaining(ctx context.Context, network string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM free_addresses WHERE network = $1 AND lane = ''`, network).Scan(&n)
	return n, translate(err)
}

// AddressByKey returns a watched address with its intent and that intent's
// required confirmations, if any, in one query.
func (t *Tx) AddressByKey(ctx context.Context, network string, key []byte) (Address, error) {
	var a Address
	var idx *int64
	err := t.tx.QueryRow(ctx, `SELECT a.network, a.key, a.address, a.source, a.derivation_index, coalesce(i.id, ''),
		a.created_at, coalesce(i.confirmations_required, 0)
		FROM addresses a LEFT JOIN intents i ON i.network = a.network AND i.address_key = a.key
		WHERE a.network = $1 AND a.key = $2`, network, key).
		Scan(&a.Network, &a.Key, &a.Address, &a.Source, &idx, &a.IntentID, &a.CreatedAt, &a.IntentConfirmations)
	a.Index = -1
	if idx != nil {
		a.Index = *idx
	}
	return a, translate(err)
}

// AddressesByKeys is AddressByKey for several keys of network in one
// query, by key (as a string); a key that is not a watched address has no
// entry.
func (t *Tx) AddressesByKeys(ctx context.Context, network string, keys [][]byte) (map[string]Address, error) {
	rows, err := t.tx.Query(ctx, addressesByKeysSQL, network, keys)
	if err != nil {
		return nil, translate(err)
	}
	return scanAddressesByKeys(rows, len(keys))
}

const addressesByKeysSQL = `SELECT a.network, a.key, a.address, a.source, a.derivation_index, coalesce(i.id, ''),
		a.created_at, coalesce(i.confirmations_required, 0)
		FROM addresses a LEFT JOIN intents i ON i.network = a.network AND i.address_key = a.key
		WHERE a.network = $1 AND a.key = ANY($2)`

// scanAddressesByKeys reads addressesByKeysSQL's rows by key, closing
// them.
func scanAddressesByKeys(rows pgx.Rows, n int) (map[string]Address, error) {
	defer rows.Close()
	out := make(map[string]Address, n)
	for rows.Next() {
		var a Address
		var idx *int64
		if err := rows.Scan(&a.Network, &a.Key, &a.Address, &a.Source, &idx, &a.IntentID, &a.CreatedAt, &a.IntentConfirmations); err != nil {
			return nil, translate(err)
		}
		a.Index = -1
		if idx != nil {
			a.Index = *idx
		}
		out[string(a.Key)] = a
	}
	return out, translate(rows.Err())
}

// WatchedKeysSince streams every watched key of network with seq > after
// (0 for all) to fn, in seq order, and returns the largest seq seen (after
// when none). seq is commit-ordered (migration 0005), so calling it again
// with the returned value never misses a row, however late it commits and
// whatever its writer's clock. fn must copy key to keep it: the slice is the
// connection's read buffer, so ten million keys load without ten million
// allocations.
func (s *Store) WatchedKeysSince(ctx context.Context, network string, after int64, fn func(key []byte)) (int64, error) {
	rows, err := s.pool.Query(ctx, watchedKeysSinceSQL, network, after)
	if err != nil {
		return after, translate(err)
	}
	return scanWatchedKeys(rows, after, fn)
}

// watchedKeysSinceSQL reads a network's addresses after a seq, in seq
// order.
const watchedKeysSinceSQL = `SELECT key, seq FROM addresses WHERE network = $1 AND seq > $2 ORDER BY seq`

// scanWatchedKeys calls fn with each key of rows (watchedKeysSinceSQL's)
// and returns the largest seq read (after when none), closing rows.
func scanWatchedKeys(rows pgx.Rows, after int64, fn func(key []byte)) (int64, error) {
	defer rows.Close()
	last := after
	for rows.Next() {
		var key pgtype.DriverBytes
		var seq int64
		if err := rows.Scan(&key, &seq); err != nil {
			return last, translate(err)
		}
		fn(key)
		last = max(last, seq)
	}
	return last, translate(rows.Err())
}

// CountAddresses returns the number of watched addresses of network, kept
// by the inserts themselves (address_counts), not counted per call.
func (s *Store) CountAddresses(ctx context.Context, network string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT n FROM address_counts WHERE network = $1), 0)`, network).Scan(&n)
	return n, translate(err)
}

// EnsurePayableTakeDerived is EnsurePayable, TakeDerivedAddress and
// OpenIntents in one round trip, for a creation of an intent of method
// with id intentID at now. It returns the stored payable, the address
// handed to intentID (nil when none is free, or when the payable has an
// open intent of method or, with openCap > 0, openCap open intents or
// more: that creation takes no address), and the payable's open intents
// (before this creation). The caller checks the payable; when it refuses
// it, rolling back frees the address again.
func (t *Tx) EnsurePayableTakeDerived(ctx context.Context, p Payable, network, source, method, intentID string, now time.Time, openCap int) (Payable, *Address, []OpenIntent, error) {
	b := &pgx.Batch{}
	st := StoreOr(p.Store)
	b.Queue(ensurePayableSQL, p.Kind, p.Reference, p.Account, p.AmountCents, p.CreatedAt, st)
	b.Queue(takeDerivedUnlessOpenSQL, network, source, []string{intentID}, string(p.Kind), p.Reference, method, now, openCap, st)
	b.Queue(openIntentsSQL, string(p.Kind), p.Reference, now, st)
	br := t.tx.SendBatch(ctx, b)
	defer br.Close()
	stored, err := scanPayable(br.QueryRow())
	if err != nil {
		return Payable{}, nil, nil, err
	}
	var taken *Address
	switch a, err := scanTakenDerived(br.QueryRow()); {
	case err == nil:
		taken = &a
	case !errors.Is(err, ErrNotFound):
		return Payable{}, nil, nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return Payable{}, nil, nil, translate(err)
	}
	open, err := scanOpenIntents(rows)
	if err != nil {
		return Payable{}, nil, nil, err
	}
	return stored, taken, open, translate(br.Close())
}

// TakeDerivedAddress hands the lowest free pre-derived address of (network,
// source) to an intent. Concurrent creations skip each other's locked rows
// instead of queueing. ErrNotFound means none is free.
func (t *Tx) TakeDerivedAddress(ctx context.Context, network, source, intentID string) (Address, error) {
	return scanTakenDerived(t.tx.QueryRow(ctx, takeDerivedManySQL, network, source, []string{intentID}))
}

// CountAddressesAll is CountAddresses of every network in one statement
// (a network with no watched address is absent: 0).
func (s *Store) CountAddressesAll(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT network, n FROM address_counts`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var network string
		var n int64
		if err := rows.Scan(&network, &n); err != nil {
			return nil, translate(err)
		}
		out[network] = n
	}
	return out, translate(rows.Err())
}

// scanTakenDerived reads one address row of takeDerivedManySQL.
func scanTakenDerived(row pgx.Row) (Address, error) {
	var a Address
	err := row.Scan(&a.Network, &a.Key, &a.Address, &a.Source, &a.Index, &a.CreatedAt, &a.IntentID, &a.Ahead)
	return a, translate(err)
}

// FreeDerived counts the free pre-derived addresses of (network, source).
func (s *Store) FreeDerived(ctx context.Context, network, source string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM free_addresses WHERE network = $1 AND lane = $2`, network, source).Scan(&n)
	return n, translate(err)
}

// FreeDerivedEach is FreeDerived of each (networks[i], sources[i]) in one
// statement: out[i] is the pair's count.
func (s *Store) FreeDerivedEach(ctx context.Context, networks, sources []string) ([]int64, error) {
	if len(networks) != len(sources) {
		return nil, fmt.Errorf("free derived: %d networks and %d sources", len(networks), len(sources))
	}
	if len(networks) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT (SELECT count(*) FROM free_addresses f WHERE f.network = u.network AND f.lane = u.lane)
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(network, lane, i) ORDER BY u.i`, networks, sources)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err == nil && len(out) != len(networks) {
		err = fmt.Errorf("free derived: %d counts for %d pairs", len(out), len(networks))
	}
	return out, translate(err)
}

// ReserveIndexes takes n consecutive derivation indexes of (network,
// source) and returns the first. The counter row is locked only for this
// statement's transaction.
func (t *Tx) ReserveIndexes(ctx context.Context, network, source string, n int64) (int64, error) {
	var first int64
	err := t.tx.QueryRow(ctx, `INSERT INTO derivation_counters (network, source, next_index) VALUES ($1, $2, $3)
		ON CONFLICT (network, source) DO UPDATE SET next_index = derivation_counters.next_index + $3
		RETURNING next_index - $3`, network, source, n).Scan(&first)
	return first, translate(err)
}

// AddressesPresent returns which of keys are watched addresses of network
// (in no order): the production checks look for the sandbox's pool keys.
func (s *Store) AddressesPresent(ctx context.Context, network string, keys [][]byte) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT address FROM addresses WHERE network = $1 AND key = ANY($2)`, network, keys)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}
