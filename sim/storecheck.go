package sim

import (
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Indexes of the invariants of stores (issue 34) in Invariants.
const (
	invStoreRows      = 29
	invStoreValue     = 30
	invStoreBooks     = 31
	invStoreAddresses = 32
	invStoreNames     = 33
)

// storeRowsSQL lists every row filed under another store than the row it
// follows from, one line each with the index of the invariant it breaks
// (invStoreRows 29, invStoreValue 30, invStoreAddresses 32); the events
// are storeEventsSQL's.
//
// It takes no parameter: PostgreSQL plans a prepared statement with
// parameters again at each run (a custom plan) until it trusts a generic
// one, and this union of fourteen joins took 2 ms to plan and 0.3 ms to
// run (pg_stat_statements), the simulator's costliest statement; without
// parameters its one generic plan is made once per connection.
const storeRowsSQL = `
SELECT 29, 'intent ' || i.id || ' is in store ' || i.store_id || ', its payable ' || p.id || ' in ' || p.store_id
	FROM intents i JOIN payables p ON p.id = i.payable_id WHERE i.store_id <> p.store_id
UNION ALL SELECT 29, 'transfer ' || t.id || ' is in store ' || t.store_id || ', the address it pays in ' || coalesce(a.store_id, 'none (default)')
	FROM transfers t LEFT JOIN addresses a ON a.network = t.network AND a.key = t.address_key WHERE t.store_id <> coalesce(a.store_id, 'default')
UNION ALL SELECT 30, 'transfer ' || t.id || ' of store ' || t.store_id || ' counts for intent ' || i.id || ' of store ' || i.store_id
	FROM transfers t JOIN intents i ON i.id = t.intent_id WHERE t.store_id <> i.store_id
UNION ALL SELECT 29, 'ledger entry ' || e.id || ' (' || e.type || ') is in store ' || e.store_id || ', its intent ' || i.id || ' in ' || i.store_id
	FROM ledger_entries e JOIN intents i ON i.id = e.intent_id WHERE e.store_id <> i.store_id
UNION ALL SELECT 29, 'ledger entry ' || e.id || ' (' || e.type || ') is in store ' || e.store_id || ', its transfer ' || t.id || ' in ' || t.store_id
	FROM ledger_entries e JOIN transfers t ON t.id = e.transfer_id WHERE e.store_id <> t.store_id
UNION ALL SELECT 29, 'ledger entry ' || e.id || ' is in store ' || e.store_id || ', its account ' || e.account || ' has no row there'
	FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM accounts c WHERE c.store_id = e.store_id AND c.account = e.account)
UNION ALL SELECT 30, 'debit ' || e.id || ' of store ' || e.store_id || ' pays ' || p.kind || ' ' || p.reference || ' of store ' || p.store_id
	FROM payables p JOIN ledger_entries e ON e.id = p.paid_by_entry WHERE e.store_id <> p.store_id
UNION ALL SELECT 30, 'debit ' || e.id || ' of store ' || e.store_id || ' names order ' || e.reference || ', which that store does not have'
	FROM ledger_entries e WHERE e.type = 'debit'
		AND NOT EXISTS (SELECT 1 FROM payables p WHERE p.store_id = e.store_id AND p.kind = 'order' AND p.reference = e.reference)
UNION ALL SELECT 29, 'payable ' || p.id || ' of store ' || p.store_id || ' is paid by intent ' || i.id || ' of store ' || i.store_id
	FROM payables p JOIN intents i ON i.id = p.paid_by_intent WHERE i.store_id <> p.store_id
UNION ALL SELECT 30, 'transfer ' || r.transfer_id || ' of store ' || t.store_id || ' is credited by finance to intent ' || i.id || ' of store ' || i.store_id
	FROM resolutions r JOIN transfers t ON t.id = r.transfer_id JOIN intents i ON i.id = r.intent_id
	WHERE r.voided_at IS NULL AND t.store_id <> i.store_id
UNION ALL SELECT 32, 'intent ' || i.id || ' of store ' || i.store_id || ' takes payment at ' || a.address || ', an address of store ' || a.store_id
	FROM intents i JOIN addresses a ON a.network = i.network AND a.key = i.address_key WHERE a.store_id <> i.store_id
UNION ALL SELECT 30, 'store ' || s.store_id || ': its accounts hold ' || s.balances || ' cents, its own ledger adds up to ' || coalesce(l.sum, 0)
	FROM (SELECT store_id, sum(balance_cents) AS balances FROM accounts GROUP BY store_id) s
	LEFT JOIN (SELECT store_id, sum(balance_after_cents) AS sum FROM (SELECT DISTINCT ON (store_id, account) store_id, balance_after_cents
		FROM ledger_entries ORDER BY store_id, account, seq DESC) last GROUP BY store_id) l ON l.store_id = s.store_id
	WHERE s.balances <> coalesce(l.sum, 0)`

// storeEventsSQL is storeRowsSQL's part for the events appended since
// event $1: each is in the store of its intent, its transfer or its
// ledger entry (invStoreRows 29).
const storeEventsSQL = `
SELECT 29, 'event ' || v.seq || ' ' || v.type || ' is in store ' || v.store_id || ', its intent ' || i.id || ' in ' || i.store_id
	FROM events v JOIN intents i ON i.id = v.intent_id WHERE v.seq > $1 AND v.store_id <> i.store_id
UNION ALL SELECT 29, 'event ' || v.seq || ' ' || v.type || ' is in store ' || v.store_id || ', its transfer ' || t.id || ' in ' || t.store_id
	FROM events v JOIN transfers t ON t.id = v.transfer_id WHERE v.seq > $1 AND v.intent_id IS NULL AND v.store_id <> t.store_id
UNION ALL SELECT 29, 'event ' || v.seq || ' ' || v.type || ' is in store ' || v.store_id || ', its ledger entry ' || e.id || ' in ' || e.store_id
	FROM events v JOIN ledger_entries e ON e.id = v.data->>'id' WHERE v.seq > $1 AND v.type LIKE 'ledger.%' AND v.store_id <> e.store_id
UNION ALL SELECT 0, coalesce(max(seq), 0)::text FROM events`

// checkStores checks that every row is in the store of the row it follows
// from (an event only once, when it is new), that each store's balances
// are its own ledger's, and that every address handed out is its store's.
//
// The rows it reads change only with an event or a new row: it runs when
// the step appended an event or a row (or after the rebuild, which writes
// behind the events' back).
func (r *run) checkStores(s *state) {
	counts := [4]int{len(s.intents), len(s.transfers), len(s.entries), len(s.payables)}
	if len(s.events) == 0 && !r.rebuilt && counts == r.chk.storeCounts {
		return
	}
	r.chk.storeCounts = counts
	// One round trip: the rows, the new events (and the last event's seq,
	// as line 0), the intents' addresses.
	b := &pgx.Batch{}
	b.Queue(storeRowsSQL)
	b.Queue(storeEventsSQL, r.chk.storeSeq)
	b.Queue(`SELECT i.id, i.store_id, a.network, a.key, a.address, a.source, a.derivation_index, a.store_id
		FROM intents i JOIN addresses a ON a.network = i.network AND a.key = i.address_key`)
	br := r.w.e.Store.Pool().SendBatch(r.ctx, b)
	defer br.Close()
	type line struct {
		inv  int
		text string
	}
	var lines []line
	for range 2 {
		rows, err := br.Query()
		if err != nil {
			r.violate("harness", "stores: %v", err)
			return
		}
		for rows.Next() {
			var l line
			if err := rows.Scan(&l.inv, &l.text); err != nil {
				rows.Close()
				r.violate("harness", "stores: %v", err)
				return
			}
			lines = append(lines, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			r.violate("harness", "stores: %v", err)
			return
		}
	}
	for _, l := range lines {
		if l.inv == 0 {
			seq, err := strconv.ParseInt(l.text, 10, 64)
			if err != nil {
				r.violate("harness", "stores: last event %q: %v", l.text, err)
				return
			}
			r.chk.storeSeq = seq
			continue
		}
		r.violate(Invariants[l.inv], "%s", l.text)
	}
	r.checkAddresses(br)
}

// checkAddresses checks the address of every intent not checked yet (the
// batch's next result: every intent's address): it is its intent's
// store's, and a derived one derives, at its index, from that store's key
// for the network (its derivation lane that key's fingerprint); a Solana
// one is in that store's pool.
func (r *run) checkAddresses(br pgx.BatchResults) {
	sh := &r.w.sh
	rows, err := br.Query()
	if err != nil {
		r.violate("harness", "addresses: %v", err)
		return
	}
	type addr struct {
		intent, shop, network, address, source, shp string
		key                                         []byte
		idx                                         *int64
	}
	var as []addr
	for rows.Next() {
		var a addr
		if err := rows.Scan(&a.intent, &a.shop, &a.network, &a.key, &a.address, &a.source, &a.idx, &a.shp); err != nil {
			rows.Close()
			r.violate("harness", "addresses: %v", err)
			return
		}
		if !r.chk.addrOK[a.intent] {
			as = append(as, a)
		}
	}
	rows.Close()
	for _, a := range as {
		n := payment.Network(a.network)
		switch {
		case a.shp != a.shop:
			// checkStores names it.
		case a.idx == nil:
			if !sh.pools[a.shp][hex.EncodeToString(a.key)] {
				r.violate(Invariants[invStoreAddresses], "intent %s of store %s: %s address %s is not in that store's pool", a.intent, a.shop, n, a.address)
				continue
			}
		default:
			der := sh.derivers[a.shp][n]
			if der == nil {
				r.violate(Invariants[invStoreAddresses], "intent %s of store %s: %s address %s (index %d), but the store has no %s key", a.intent, a.shop, n, a.address, *a.idx, n)
				continue
			}
			d, err := der.Derive(uint32(*a.idx))
			if err != nil || string(d.Key) != string(a.key) || a.source != sh.fingerprints[a.shp][n] {
				r.violate(Invariants[invStoreAddresses], "intent %s of store %s: %s address %s (index %d, lane %s) does not derive from that store's key (%s at that index)",
					a.intent, a.shop, n, a.address, *a.idx, a.source, d.String)
				continue
			}
		}
		r.chk.addrOK[a.intent] = true
	}
}

// payableRec is a store's payable as a creation found it.
type payableRec struct {
	found         bool
	cents         int64
	account, kind string
	paid          bool // paid by an intent
	debited       bool // paid by a debit
}

// payableOf reads shop's payable (kind, ref), if any.
func (r *run) payableOf(shop, kind, ref string) payableRec {
	var p payableRec
	err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT amount_cents, coalesce(account, ''), paid_by_intent IS NOT NULL, paid_by_entry IS NOT NULL
		FROM payables WHERE store_id = $1 AND kind = $2 AND reference = $3`,
		store.StoreOr(shop), kind, ref).Scan(&p.cents, &p.account, &p.paid, &p.debited)
	p.found = err == nil
	return p
}

// checkNamespace checks a creation's answer against its own store's
// payable before it: a 409 conflict only when that payable exists with
// another amount or account (never because another store has the
// reference), and a creation answered 200 or 201 for a payable of its
// store.
func (r *run) checkNamespace(shop string, body map[string]string, before payableRec, st int, resp []byte) {
	code := brief(resp)
	if st == 409 && code == "conflict" {
		cents, _ := payment.ParseUSD(body["amount_usd"])
		if !before.found || (before.cents == int64(cents) && before.account == body["account"]) {
			r.violate(Invariants[invStoreNames], "store %s: %s %s %s USD account %s refused as a conflict, but that store's payable is %+v",
				shop, body["kind"], body["reference"], body["amount_usd"], body["account"], before)
		}
	}
	if st == 200 || st == 201 {
		var v struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(resp, &v)
		var got string
		_ = r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT store_id FROM intents WHERE id = $1`, v.ID).Scan(&got)
		if got != store.StoreOr(shop) {
			r.violate(Invariants[invStoreNames], "store %s's creation of %s %s answered intent %s of store %q", shop, body["kind"], body["reference"], v.ID, got)
		}
	}
}

// checkAcross checks finance's decision on transfer c sent for shop: a
// credit_intent to another store's intent is refused, whoever sends it
// (the rows it would write are checkStores's).
func (r *run) checkAcross(c cand, req map[string]string, shop string, st int, resp []byte) {
	if st != 200 || req["action"] != finance.ActionCreditIntent {
		return
	}
	for _, in := range r.intents {
		if in.id == req["intent_id"] && in.shop != store.StoreOr(c.shop) {
			r.violate(Invariants[invStoreValue], "finance (acting for %s) credited transfer %s of store %s to intent %s of store %s: %d %s",
				shop, c.id, c.shop, in.id, in.shop, st, brief(resp))
		}
	}
}

// checkDebitNamespace checks a debit's answer against its own store's
// order before it: already_paid only when that order is paid by an
// intent, a conflict only when it has another amount or account, an
// answer of 200 (the debit again) only when it was debited.
func (r *run) checkDebitNamespace(shop, ref, account, usd string, before payableRec, st int, resp []byte) {
	cents, _ := payment.ParseUSD(usd)
	var bad bool
	switch code := brief(resp); {
	case st == 409 && code == "already_paid":
		bad = !before.paid
	case st == 409 && code == "conflict":
		bad = !before.found || (before.cents == int64(cents) && before.account == account)
	case st == 200:
		bad = !before.debited
	}
	if bad {
		r.violate(Invariants[invStoreNames], "store %s: debit of order %s (%s USD from %s) answered %d %s, but that store's order is %+v",
			shop, ref, usd, account, st, brief(resp), before)
	}
}
