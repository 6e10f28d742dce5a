package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/payment"
)

// The statements of a batch of intent creations: what EnsurePayable,
// TakeDerivedAddress, InsertIntent, AppendEvent and the idempotency calls
// do for one creation, each done for several in one statement. A batch
// costs the database a few statements and two round trips however many
// creations it holds (three when one of its payables was stored before),
// where one creation alone costs five statements; the rows written are the
// same.

// IdempotencyClaim is an Idempotency-Key a creation of a batch claims.
type IdempotencyClaim struct {
	APIKeyID string
	Key      string
	Hash     []byte
}

// Creations is the first round trip of a batch of creations on one network.
type Creations struct {
	// Claims are claimed as ClaimIdempotencyKey does, all or none (see
	// AllClaimed).
	Claims []IdempotencyClaim
	// Payables are ensured as EnsurePayable does; their (kind, reference)
	// must be distinct.
	Payables []Payable
	// IntentIDs get the lowest free pre-derived addresses of (Network,
	// Source), one each, in order, as TakeDerivedAddress hands them; at
	// most MaxTaken.
	IntentIDs []string
	Network   string
	Source    string
	Now       time.Time
}

// CreationsBegun is what BeginCreations found.
type CreationsBegun struct {
	// Claimed says, for each of Creations.Claims, whether its key was
	// claimed; one already used is not, and the caller that needs it must
	// roll back.
	Claimed []bool
	// Payables are the stored payables, in the order of Creations.Payables.
	Payables []Payable
	// Open says, for each of Payables, whether it has an open intent
	// (OpenIntent): such a creation must run alone, where it answers that
	// intent or counts the payable's open intents.
	Open []bool
	// Taken are the addresses taken, Taken[i] for IntentIDs[i]; shorter
	// than IntentIDs when fewer addresses were free.
	Taken []Address
}

// BeginCreations claims the keys, ensures the payables and takes the
// addresses of a batch of creations, in one round trip, then looks up
// which of the payables stored before have an open intent (see
// openPayables). A caller that
// refuses any of it rolls the transaction back, which frees the addresses
// and the claims again.
func (t *Tx) BeginCreations(ctx context.Context, c Creations) (CreationsBegun, error) {
	got := CreationsBegun{Claimed: make([]bool, len(c.Claims))}
	if len(c.IntentIDs) > MaxTaken {
		return got, fmt.Errorf("begin creations: %d intents in one batch, at most %d", len(c.IntentIDs), MaxTaken)
	}
	order, err := payableOrder(c.Payables)
	if err != nil {
		return got, err
	}
	b := &pgx.Batch{}
	if len(c.Claims) > 0 {
		queueClaims(b, c.Claims, c.Now)
	}
	queueEnsurePayables(b, c.Payables)
	b.Queue(takeDerivedManySQL, c.Network, c.Source, c.IntentIDs)
	br := t.tx.SendBatch(ctx, b)
	defer br.Close()
	if len(c.Claims) > 0 {
		var claimed []int64
		if err := br.QueryRow().Scan(&claimed); err != nil {
			return got, translate(err)
		}
		for _, n := range claimed {
			got.Claimed[n-1] = true
		}
	}
	var stored []bool
	if got.Payables, stored, err = scanPayablesInOrder(br, order); err != nil {
		return got, err
	}
	if got.Taken, err = scanTakenInOrder(br, c.IntentIDs); err != nil {
		return got, err
	}
	if err := br.Close(); err != nil {
		return got, translate(err)
	}
	got.Open, err = t.openPayables(ctx, got.Payables, stored, c.Now)
	return got, err
}

// openPayables says, for each of ps, whether it has an open intent at now.
// Only a payable stored before this transaction (stored[i]) can have one:
// one it inserted has no intent yet, and none is looked up for it, so a
// batch of new payables (the usual creations) costs no statement here. The
// others are looked up after their ensure statement, whose row lock makes
// the intents of a concurrent creation of the same payable visible.
func (t *Tx) openPayables(ctx context.Context, ps []Payable, stored []bool, now time.Time) ([]bool, error) {
	open := make([]bool, len(ps))
	var ids []int64
	var at []int
	for i, p := range ps {
		if stored[i] {
			ids, at = append(ids, p.ID), append(at, i)
		}
	}
	if len(ids) == 0 {
		return open, nil
	}
	var found []int64
	if err := t.tx.QueryRow(ctx, openPayablesSQL, ids, now).Scan(&found); err != nil {
		return nil, translate(err)
	}
	for _, n := range found {
		if n < 1 || int(n) > len(at) {
			return nil, fmt.Errorf("begin creations: open payable %d of %d", n, len(at))
		}
		open[at[n-1]] = true
	}
	return open, nil
}

// payableOrder is the position of each payable by (kind, reference), which
// must be distinct.
func payableOrder(ps []Payable) (map[[3]string]int, error) {
	order := make(map[[3]string]int, len(ps))
	for i, p := range ps {
		k := [3]string{StoreOr(p.Store), string(p.Kind), p.Reference}
		if _, dup := order[k]; dup {
			return nil, fmt.Errorf("begin creations: payable %s %s twice in one batch", p.Kind, p.Reference)
		}
		order[k] = i
	}
	return order, nil
}

// queueClaims claims every key it can; its answer is the positions (from
// 1) of the claims it made.
func queueClaims(b *pgx.Batch, cs []IdempotencyClaim, now time.Time) {
	ids, keys, hashes := make([]string, len(cs)), make([]string, len(cs)), make([][]byte, len(cs))
	for i, cl := range cs {
		ids[i], keys[i], hashes[i] = cl.APIKeyID, cl.Key, cl.Hash
	}
	b.Queue(`WITH claimed AS (INSERT INTO idempotency_keys (api_key_id, key, request_hash, status, response, created_at)
			SELECT k, key, h, 0, ''::bytea, $4 FROM unnest($1::text[], $2::text[], $3::bytea[]) AS u(k, key, h)
			ON CONFLICT DO NOTHING RETURNING api_key_id, key)
		SELECT coalesce(array_agg(u.n) FILTER (WHERE c.key IS NOT NULL), '{}')
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(k, key, n)
		LEFT JOIN claimed c ON c.api_key_id = u.k AND c.key = u.key`, ids, keys, hashes, now)
}

// queueEnsurePayables is ensurePayableSQL for every payable of ps. Each
// row also says whether the payable was stored before: xmax is 0 on a row
// the statement inserted, and the transaction's id on one its no-op
// update locked.
func queueEnsurePayables(b *pgx.Batch, ps []Payable) {
	n := len(ps)
	kinds, refs, accounts, cents, created := make([]string, n), make([]string, n), make([]string, n), make([]int64, n), make([]time.Time, n)
	stores := make([]string, n)
	for i, p := range ps {
		kinds[i], refs[i], accounts[i], cents[i], created[i] = string(p.Kind), p.Reference, p.Account, p.AmountCents, p.CreatedAt
		stores[i] = StoreOr(p.Store)
	}
	b.Queue(`INSERT INTO payables (kind, reference, account, amount_cents, created_at, store_id)
		SELECT kind, reference, NULLIF(account, ''), cents, at, store
		FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[], $6::text[]) AS u(kind, reference, account, cents, at, store)
		ON CONFLICT (store_id, kind, reference) DO UPDATE SET kind = payables.kind
		RETURNING `+payableColumns+`, xmax <> 0`, kinds, refs, accounts, cents, created, stores)
}

// scanPayablesInOrder reads the payables into the positions of order;
// each must be there once. stored[i] says whether payable i was there
// before (the statement updated it) rather than inserted.
func scanPayablesInOrder(br pgx.BatchResults, order map[[3]string]int) (out []Payable, stored []bool, err error) {
	rows, err := br.Query()
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	out, stored = make([]Payable, len(order)), make([]bool, len(order))
	found := 0
	for rows.Next() {
		var p Payable
		var before bool
		if err := rows.Scan(&p.ID, &p.Store, &p.Kind, &p.Reference, &p.Account, &p.AmountCents, &p.PaidByIntent, &p.PaidByEntry, &p.PaidAt, &p.CreatedAt,
			&before); err != nil {
			return nil, nil, translate(err)
		}
		i, ok := order[[3]string{p.Store, string(p.Kind), p.Reference}]
		if !ok {
			return nil, nil, fmt.Errorf("begin creations: payable %s %s was not asked for", p.Kind, p.Reference)
		}
		out[i], stored[i] = p, before
		found++
	}
	if err := rows.Err(); err != nil {
		return nil, nil, translate(err)
	}
	if found != len(order) {
		return nil, nil, fmt.Errorf("begin creations: %d of %d payables stored", found, len(order))
	}
	return out, stored, nil
}

// scanTakenInOrder reads the taken addresses, which went to the first of
// ids in order, and returns them in that order.
func scanTakenInOrder(br pgx.BatchResults, ids []string) ([]Address, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	byID := make(map[string]Address, len(ids))
	for rows.Next() {
		a, err := scanTakenDerived(rows)
		if err != nil {
			return nil, err
		}
		byID[a.IntentID] = a
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	taken := make([]Address, 0, len(byID))
	for _, id := range ids[:len(byID)] {
		a, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("begin creations: addresses taken out of order")
		}
		taken = append(taken, a)
	}
	return taken, nil
}

// takeDerivedManySQL hands the lowest free pre-derived addresses of
// (network $1, source $2) to the intents $3, lowest index first, one each
// in order (an id beyond the free ones gets none): it deletes them from
// free_addresses, and the intents inserted with them record the hand-out.
// Concurrent takers skip each other's locked rows instead of queueing.
// Ahead is the number of indexes derived above each address. At most
// MaxTaken intents get one.
//
// The rows are locked under a constant LIMIT (MaxTaken) and taken under
// the intents' count: a row is locked only when the outer LIMIT reads it,
// so exactly as many are locked as taken. The constant is for the
// planner. With the count alone as the limit, the plan cached for any
// count (generic) is costed for a tenth of the free rows, many times the
// cost of one planned for the count at hand (custom), so PostgreSQL
// planned the statement anew at every batch; under the constant it is
// costed for a few rows and the cached plan serves.
var takeDerivedManySQL = takeDerivedSQL("true")

// MaxTaken is the most intents one statement of takeDerivedSQL hands
// addresses to.
const MaxTaken = 64

// takeDerivedSQL is takeDerivedManySQL taking addresses only when cond
// (an SQL boolean, which may use further parameters) holds.
func takeDerivedSQL(cond string) string {
	return `WITH free AS (
		DELETE FROM free_addresses WHERE (network, lane, ord) IN (
			SELECT network, lane, ord FROM (
				SELECT network, lane, ord FROM free_addresses WHERE network = $1 AND lane = $2 AND ` + cond + `
				ORDER BY ord LIMIT ` + strconv.Itoa(MaxTaken) + ` FOR UPDATE SKIP LOCKED) locked
			LIMIT cardinality($3::text[]))
		RETURNING key, ord),
	taken AS (SELECT key, row_number() OVER (ORDER BY ord) AS n FROM free)
	SELECT a.network, a.key, a.address, a.source, a.derivation_index, a.created_at, ids.id,
		coalesce((SELECT next_index FROM derivation_counters WHERE network = $1 AND source = $2), a.derivation_index + 1)
			- a.derivation_index - 1
	FROM taken JOIN unnest($3::text[]) WITH ORDINALITY AS ids(id, n) USING (n)
	JOIN addresses a ON a.network = $1 AND a.key = taken.key`
}

// QueueInsertIntents is QueueInsertIntent for several intents, in one
// statement.
func (t *Tx) QueueInsertIntents(ins []Intent) {
	t.tx.queue(insertIntentsSQL, insertIntentsArgs(ins)...)
}

// insertIntentsSQL inserts the intents of insertIntentsArgs, one row per
// element of its arrays.
const insertIntentsSQL = `INSERT INTO intents (id, payable_id, method, network, asset, amount, tolerance, dust_min,
		address, address_key, rate, rate_sources, rate_at, expires_at, status, confirmations_required,
		renewed_from, created_at, updated_at, return_url, locale)
		SELECT id, payable_id, method, network, asset, amount::numeric, tolerance::numeric, dust_min::numeric,
			address, address_key, rate::numeric, ARRAY(SELECT jsonb_array_elements_text(sources::jsonb)), rate_at, expires_at,
			status, confirmations, NULLIF(renewed_from, ''), created_at, created_at, NULLIF(return_url, ''), NULLIF(locale, '')
		FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			$9::text[], $10::bytea[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[], $15::text[], $16::bigint[],
			$17::text[], $18::timestamptz[], $19::text[], $20::text[])
			AS u(id, payable_id, method, network, asset, amount, tolerance, dust_min, address, address_key, rate, sources,
				rate_at, expires_at, status, confirmations, renewed_from, created_at, return_url, locale)`

// insertIntentsArgs are the column arrays of insertIntentsSQL. An intent's
// rate sources travel as a JSON array: a text[] cannot hold one array per
// row.
func insertIntentsArgs(ins []Intent) []any {
	n := len(ins)
	ids, methods, networks, assets := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	amounts, tols, dusts, addrs, rates := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	sources, statuses, renewed, returns, locales := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	payables, confs := make([]int64, n), make([]int64, n)
	keys := make([][]byte, n)
	rateAt, expires, created := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	for i, in := range ins {
		src, _ := json.Marshal(in.RateSources) // a []string always encodes
		ids[i], payables[i], methods[i], networks[i], assets[i] = in.ID, in.PayableID, in.Method, in.Network, in.Asset
		amounts[i], tols[i], dusts[i], addrs[i], keys[i] = num(in.Amount), num(in.Tolerance), num(in.DustMin), in.Address, in.AddressKey
		rates[i], sources[i], rateAt[i], expires[i] = in.Rate, string(src), in.RateAt, in.ExpiresAt
		statuses[i], confs[i], renewed[i], created[i] = string(in.Status), int64(in.ConfirmationsRequired), in.RenewedFrom, in.CreatedAt
		returns[i], locales[i] = in.ReturnURL, in.Locale
	}
	return []any{ids, payables, methods, networks, assets, amounts, tols, dusts, addrs, keys, rates, sources, rateAt, expires,
		statuses, confs, renewed, created, returns, locales}
}

// NewEvent is one event of QueueAppendEvents.
type NewEvent struct {
	IntentID, TransferID, Account string
	Data                          any
	// JSON, when set, is Data already encoded (json.Marshal of it), and
	// is stored as it is.
	JSON []byte
}

// QueueAppendEvents is QueueAppendEvent for several events of one type, in
// one statement, appended in the order given.
func (t *Tx) QueueAppendEvents(typ payment.EventType, evs []NewEvent, now time.Time) error {
	n := len(evs)
	ids, intents, transfers, accounts, bodies := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, e := range evs {
		body := e.JSON
		if body == nil {
			var err error
			if body, err = json.Marshal(e.Data); err != nil {
				return fmt.Errorf("event %s: %w", typ, err)
			}
		}
		ids[i], intents[i], transfers[i], accounts[i], bodies[i] = NewID("ev"), e.IntentID, e.TransferID, e.Account, string(body)
	}
	t.events = true
	t.tx.queueAtCommit(`SELECT paywatch_append_events($1, $2, $3, $4, $5, $6::jsonb[], $7)`,
		ids, string(typ), intents, transfers, accounts, bodies, now)
	return nil
}

// SavedResponse is one response of QueueSaveIdempotentResponses.
type SavedResponse struct {
	APIKeyID, Key string
	Status        int
	Body          []byte
}

// QueueSaveIdempotentResponses is QueueSaveIdempotentResponse for several
// claimed keys, in one statement.
func (t *Tx) QueueSaveIdempotentResponses(rs []SavedResponse) {
	t.tx.queue(saveIdempotentSQL, saveIdempotentArgs(rs)...)
}

// saveIdempotentSQL stores the responses of saveIdempotentArgs under their
// claimed keys.
const saveIdempotentSQL = `UPDATE idempotency_keys i SET status = u.status, response = u.body
	FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bytea[]) AS u(k, key, status, body)
	WHERE i.api_key_id = u.k AND i.key = u.key`

func saveIdempotentArgs(rs []SavedResponse) []any {
	n := len(rs)
	ids, keys, statuses, bodies := make([]string, n), make([]string, n), make([]int64, n), make([][]byte, n)
	for i, r := range rs {
		ids[i], keys[i], statuses[i], bodies[i] = r.APIKeyID, r.Key, int64(r.Status), r.Body
	}
	return []any{ids, keys, statuses, bodies}
}
