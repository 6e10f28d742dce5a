package sim

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

var isolationFlag = flag.Int("isolation-histories", 24, "histories of TestStoresIsolation")

// TestStoresIsolation is a property test at the stores' API edge (issue
// 34): random sequences of creations, payments, debits and finance
// decisions in two stores that share references and accounts, and after
// every step each store's own key reads what it must and nothing of the
// other store: its intents 200, the other store's 404 with the body of an
// id that does not exist; its accounts' balances and ledgers are its own
// ledger's, never the other store's entries; no answer to it names an
// intent, transfer or ledger entry of the other store. The simulator's
// invariants are checked too (Run's check after every step).
func TestStoresIsolation(t *testing.T) {
	w := newWorld(t)
	disabled := map[Kind]bool{}
	keep := map[Kind]bool{Create: true, Pay: true, Mine: true, Scan: true, Debit: true, Resolve: true, Report: true, Renew: true, Clock: true, LateCredit: true}
	for k := Kind(0); k < numKinds; k++ {
		disabled[k] = !keep[k]
	}
	for seed := uint64(1); seed <= uint64(*isolationFlag); seed++ {
		h := Generate(900000+seed, 16, disabled)
		r := newRun(w, h)
		w.cur.Store(r)
		ok := r.start()
		for i, a := range h.Actions {
			if !ok || len(r.viol) > 0 {
				break
			}
			r.step, r.orig = i+1, a.I
			r.exec(a)
			if len(r.viol) == 0 {
				r.check()
			}
			if len(r.viol) == 0 {
				r.checkIsolation()
			}
		}
		w.cur.Store(nil)
		r.releaseAll()
		if len(r.viol) > 0 {
			t.Fatalf("seed %d: %s\ntrace:\n%s", h.Seed, r.viol[0], strings.Join(r.trace, "\n"))
		}
	}
}

// checkIsolation reads every intent, balance and ledger with each store's
// own storefront key (scope "storefront@shop-b", "storefront@default").
func (r *run) checkIsolation() {
	keyOf := func(shop string) string { return "storefront@" + shop }
	owner := map[string]string{} // id of an intent, transfer or entry -> its store
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT id, store_id FROM intents UNION ALL SELECT id, store_id FROM transfers
		UNION ALL SELECT id, store_id FROM ledger_entries`)
	if err != nil {
		r.violate("harness", "ids: %v", err)
		return
	}
	for rows.Next() {
		var id, shop string
		if rows.Scan(&id, &shop) == nil {
			owner[id] = shop
		}
	}
	rows.Close()
	// leaks: an answer to shop's key names something of another store
	// (but for the id the request named itself: a 404 says it back).
	leaks := func(shop, what string, body []byte, asked ...string) {
		for id, o := range owner {
			if o != shop && strings.Contains(string(body), id) && (len(asked) == 0 || id != asked[0]) {
				r.violate(Invariants[invStoreRows], "store %s's key reads %s of store %s in %s: %s", shop, id, o, what, shorten(string(body)))
			}
		}
	}
	for _, in := range r.intents {
		for _, shop := range shops {
			st, body := r.w.do("GET", "/v1/intents/"+in.id, keyOf(shop), nil)
			leaks(shop, "GET /v1/intents/"+in.id, body, in.id)
			switch {
			case shop == in.shop && st != 200:
				r.violate(Invariants[invStoreRows], "store %s's key reads its intent %s: %d %s", shop, in.id, st, brief(body))
			case shop != in.shop:
				// The body of an id that does not exist, the id aside.
				unknown := "pi_" + strings.Repeat("0", len(in.id)-3)
				ust, ubody := r.w.do("GET", "/v1/intents/"+unknown, keyOf(shop), nil)
				if st != 404 || ust != st || strings.ReplaceAll(string(body), in.id, unknown) != string(ubody) {
					r.violate(Invariants[invStoreRows], "store %s's key reads intent %s of store %s: %d %s; an unknown id: %d %s",
						shop, in.id, in.shop, st, shorten(string(body)), ust, shorten(string(ubody)))
				}
				// Reporting or renewing it is as unknown, and changes nothing.
				for _, act := range []string{"report", "renew"} {
					st, body := r.mutate("POST", "/v1/intents/"+in.id+"/"+act, keyOf(shop), nil)
					ust, ubody := r.w.do("POST", "/v1/intents/"+unknown+"/"+act, keyOf(shop), nil)
					leaks(shop, act+" "+in.id, body, in.id)
					if st != 404 || ust != st || strings.ReplaceAll(string(body), in.id, unknown) != string(ubody) {
						r.violate(Invariants[invStoreRows], "store %s's key %ss intent %s of store %s: %d %s; an unknown id: %d %s",
							shop, act, in.id, in.shop, st, shorten(string(body)), ust, shorten(string(ubody)))
					}
				}
			}
		}
	}
	// Balances and ledgers: each store's as its ledger has them.
	last := map[string]int64{}
	rows, err = r.w.e.Store.Pool().Query(r.ctx, `SELECT DISTINCT ON (store_id, account) `+qualifiedSQL("store_id", "account")+`, balance_after_cents
		FROM ledger_entries ORDER BY store_id, account, seq DESC`)
	if err != nil {
		r.violate("harness", "ledger: %v", err)
		return
	}
	for rows.Next() {
		var a string
		var c int64
		if rows.Scan(&a, &c) == nil {
			last[a] = c
		}
	}
	rows.Close()
	for _, shop := range shops {
		for i := range 2 {
			account := fmt.Sprintf("acct-%d", i)
			st, body := r.w.do("GET", "/v1/accounts/"+account+"/balance", keyOf(shop), nil)
			leaks(shop, "GET balance "+account, body)
			var v struct {
				Available string `json:"available_usd"`
			}
			if st != 200 || json.Unmarshal(body, &v) != nil {
				r.violate(Invariants[invStoreValue], "store %s: GET balance of %s: %d %s", shop, account, st, brief(body))
				continue
			}
			if want := payment.Cents(last[qualified(shop, account)]).String(); v.Available != want {
				r.violate(Invariants[invStoreValue], "store %s's key reads account %s at %s available, its ledger says %s", shop, account, v.Available, want)
			}
			st, body = r.w.do("GET", "/v1/accounts/"+account+"/ledger?limit=1000", keyOf(shop), nil)
			leaks(shop, "GET ledger "+account, body)
			if st != 200 {
				r.violate(Invariants[invStoreValue], "store %s: GET ledger of %s: %d %s", shop, account, st, brief(body))
			}
		}
	}
}

// An every-store key's Idempotency-Key names one request in one store: the
// same key and body sent for another store is not answered with the first
// store's intent (issue 34).
func TestIdempotencyKeyIsPerStore(t *testing.T) {
	w := newWorld(t)
	r := newRun(w, History{Seed: 1, Nets: []payment.Network{payment.Bitcoin}})
	w.cur.Store(r)
	defer w.cur.Store(nil)
	defer r.releaseAll()
	if !r.start() {
		t.Fatalf("start: %v", r.viol)
	}
	body := `{"kind":"order","reference":"ord-1","account":"acct-0","amount_usd":"37.50","method":"BTC"}`
	st, first := w.do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "same-key", "Paywatch-Store", shopB)
	if st != 201 {
		t.Fatalf("create in %s: %d %s", shopB, st, first)
	}
	st, second := w.do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "same-key")
	var a, b struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(first, &a)
	_ = json.Unmarshal(second, &b)
	if st < 300 && b.ID == a.ID {
		t.Fatalf("the same Idempotency-Key for the default store answered %d with %s's intent %s", st, shopB, a.ID)
	}
	var shop string
	if st < 300 {
		if err := w.e.Store.Pool().QueryRow(r.ctx, `SELECT store_id FROM intents WHERE id = $1`, b.ID).Scan(&shop); err != nil || shop != "default" {
			t.Fatalf("the default store's creation answered %d with intent %s of store %q (%v)", st, b.ID, shop, err)
		}
	}
}
