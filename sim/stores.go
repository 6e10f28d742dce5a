package sim

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Stores (issue 34): every history runs with two stores, the default one
// and shopB, which has extended keys and a Solana pool of its own. Both
// create intents, payables and debits with the same references and
// accounts (a.shop picks the store of an action), so that anything keyed
// by reference or account alone, or a row filed under the wrong store,
// shows as a broken invariant.

// shopB is the simulator's second store.
const shopB = "shop-b"

// shops are the stores of every history, the default first.
var shops = []string{store.DefaultStore, shopB}

// shopBKeys are shopB's extended public keys: account 1 of the public
// Hardhat/Foundry test mnemonic (addresses.SandboxKeys are its account 0,
// the default store's), m/84'/1'/1', m/84'/2'/1', m/44'/60'/1',
// m/44'/195'/1'. Well-known test keys: never real money.
var shopBKeys = map[payment.Network]string{
	payment.Bitcoin:  "vpub5YRRorZVvAATN8pWpdmbkGYtgfKwktxaifQrSdz1CznbUoW6H3rxLekTEDJEfvuRSd5bUjT3zyeVRXQKQ1xbpvciWfvmycLChpLs7WFv3ZC",
	payment.Litecoin: "Ltub2YWJAmaeQmhQCf7fhBU81XPAW9XBAQVLCi3hw7naRQQDVh98mdrgp7uAKAzbpfp49uwErvX3BsgwSXUn8ULqhSUQrBGjgAEmXHm64F7vjBp",
	payment.Ethereum: "xpub6Ce9NcJvTk372KjsGfWqbcex5DumjpNquQLApoeQUavSCjEc823BV1tb4rXUuPuht8h2hSxkg2EXUaKUJmniJvRZAELxypsCzBFdtosmV76",
	payment.Tron:     "xpub6BuRy7ZmkGfP4LfiwbWSuu7pRCfSbjyB59BHNudeJgwsJUu23Dzmz4fRKh7Bsfo1EgmmCxtCLsat66A3Fe28PGEzwkmiTChdjv5PDhyqh2Q",
}

// Solana pools: paywatchtest imports SandboxSolanaPool[:10] for the
// default store; shopB's pool is the next ten.
var (
	defaultPool = addresses.SandboxSolanaPool[:10]
	shopBPool   = addresses.SandboxSolanaPool[10:20]
)

// simChain is the chain every network of the simulator's Env is on.
const simChain = "regtest"

// initShops creates shopB's row, keys and pool, and API keys bound to each
// store ("storefront@shop-b", "finance@default", … in the Env's keys). The
// daemon builds the payment core's setup of shopB from its row and keys
// (daemon.StoreSetups) each time a history restarts the service.
func (w *world) initShops(t testing.TB) {
	ctx := context.Background()
	if err := w.ensureShops(ctx); err != nil {
		t.Fatalf("stores: %v", err)
	}
	now := w.e.Clock.Now()
	var rows []store.Address
	for i, k := range shopBPool {
		a, err := addresses.ParseAddress(payment.Solana, "mainnet", k)
		if err != nil {
			t.Fatalf("pool key %s: %v", k, err)
		}
		rows = append(rows, store.Address{Network: string(payment.Solana), Key: a.Key, Address: a.String, Source: "pool", Index: -1,
			CreatedAt: now.Add(time.Duration(i) * time.Microsecond), Store: shopB})
	}
	if err := w.e.Store.InTx(ctx, func(tx *store.Tx) error { _, err := tx.AddAddresses(ctx, rows); return err }); err != nil {
		t.Fatalf("import %s's pool: %v", shopB, err)
	}
	for _, shop := range shops {
		for _, scope := range []string{"storefront", "finance"} {
			plain, _, err := w.e.Store.CreateStoreAPIKey(ctx, scope+"@"+shop, []string{scope}, shop, "", now)
			if err != nil {
				t.Fatalf("%s key of %s: %v", scope, shop, err)
			}
			w.e.Keys[scope+"@"+shop] = plain
		}
	}
	w.sh.derivers = map[string]map[payment.Network]addresses.Deriver{}
	w.sh.fingerprints = map[string]map[payment.Network]string{}
	w.sh.pools = map[string]map[string]bool{}
	for shop, keys := range map[string]map[payment.Network]string{store.DefaultStore: addresses.SandboxKeys, shopB: shopBKeys} {
		w.sh.derivers[shop], w.sh.fingerprints[shop] = map[payment.Network]addresses.Deriver{}, map[payment.Network]string{}
		for n, key := range keys {
			der, err := addresses.NewDeriver(n, key, simChain)
			if err != nil {
				t.Fatalf("%s key of %s: %v", n, shop, err)
			}
			fp, _ := addresses.Fingerprint(key)
			w.sh.derivers[shop][n], w.sh.fingerprints[shop][n] = der, fp
		}
	}
	for shop, pool := range map[string][]string{store.DefaultStore: defaultPool, shopB: shopBPool} {
		w.sh.pools[shop] = map[string]bool{}
		for _, k := range pool {
			a, _ := addresses.ParseAddress(payment.Solana, "mainnet", k)
			w.sh.pools[shop][hex.EncodeToString(a.Key)] = true
		}
	}
}

// shopWorld is what a world knows of its stores' keys, for the address
// check: each store's derivers and fingerprints by network, and its Solana
// pool (keys in hex).
type shopWorld struct {
	derivers     map[string]map[payment.Network]addresses.Deriver
	fingerprints map[string]map[payment.Network]string
	pools        map[string]map[string]bool
}

// ensureShops creates shopB's row and keys: a history changes no store,
// so the reset leaves them, with their addresses and API keys.
func (w *world) ensureShops(ctx context.Context) error {
	var b strings.Builder
	fmt.Fprintf(&b, `INSERT INTO stores (id, name, created_at, updated_at) VALUES ('%s', 'second shop', now(), now()) ON CONFLICT DO NOTHING;`, shopB)
	for n, key := range shopBKeys {
		fp, err := addresses.Fingerprint(key)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, `INSERT INTO store_keys (store_id, network, account_key, fingerprint, added_at) VALUES ('%s', '%s', '%s', '%s', now()) ON CONFLICT DO NOTHING;`,
			shopB, n, key, fp)
	}
	_, err := w.e.Store.Pool().Exec(ctx, b.String())
	return err
}

// shop is the store an action acts in: shopB for a third of them.
func (a Action) shop() string {
	if (a.C>>12)%3 == 0 {
		return shopB
	}
	return store.DefaultStore
}

// as is how a request acts for shop with scope: the default store with the
// every-store key (as before stores); another store with the store's own
// key or, every other step, the every-store key naming it in the
// Paywatch-Store header.
func (r *run) as(shop, scope string) (string, []string) {
	if store.StoreOr(shop) == store.DefaultStore {
		return scope, nil
	}
	if _, ok := r.w.e.Keys[scope+"@"+shop]; ok && r.step%2 == 0 {
		return scope + "@" + shop, nil
	}
	return scope, []string{api.StoreHeader, shop}
}

// named is the every-store key naming shop in the header: how the checks
// read a store's objects.
func named(shop string) []string {
	return []string{api.StoreHeader, store.StoreOr(shop)}
}

// qualified is how the checks name a store's account or reference: as is
// in the default store, "store/name" in another (the SQL of load writes
// the same, qualifiedSQL).
func qualified(shop, name string) string {
	if store.StoreOr(shop) == store.DefaultStore {
		return name
	}
	return shop + "/" + name
}

// unqualified splits a qualified name into its store and name.
func unqualified(q string) (string, string) {
	if shop, name, ok := strings.Cut(q, "/"); ok {
		return shop, name
	}
	return store.DefaultStore, q
}

// qualifiedSQL is qualified in SQL, for column col of a row whose store is
// the column shop.
func qualifiedSQL(shop, col string) string {
	return fmt.Sprintf("CASE WHEN %s = 'default' THEN %s ELSE %s || '/' || %s END", shop, col, shop, col)
}

// shopTag is shop for a trace line ("" for the default store).
func shopTag(shop string) string {
	if store.StoreOr(shop) == store.DefaultStore {
		return ""
	}
	return "[" + shop + "] "
}

// rebuildStore is "same facts, same books" per store, after the rebuild:
// one store's decisions (its transfers' classes, settled parts and
// notifications, its intents' statuses and sums) are forgotten while the
// other store's stand, every chain is scanned again from its first height
// and only that store's payables are decided again. Both stores' books
// must come back as they were (a store's books follow from its own facts:
// nothing of the other store's state stands in for them), and nothing of
// the other store is written (no event). It runs in every other history
// (even seeds, to keep make test's time) for one store, the seed's; a
// history none of whose intents is shopB's skips it, and so does one the
// rebuild could not settle.
func (r *run) rebuildStore() {
	var ids []string
	usesB := false
	for _, in := range r.intents {
		usesB = usesB || in.shop == shopB
	}
	if !usesB || !r.rebuilt || r.h.Seed%2 == 1 {
		return // (the rebuild did not run: a network stopped on a deep reorg)
	}
	shop := shops[(r.h.Seed/2)%2]
	other := shops[(r.h.Seed/2+1)%2]
	pool := r.w.e.Store.Pool()
	rows, err := pool.Query(r.ctx, `SELECT id FROM intents WHERE store_id = $1 ORDER BY id`, shop)
	if err != nil {
		r.violate("harness", "intents of %s: %v", shop, err)
		return
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			r.violate("harness", "intents of %s: %v", shop, err)
			return
		}
		ids = append(ids, id)
	}
	rows.Close()
	before, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	var seq int64
	if err := pool.QueryRow(r.ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq); err != nil {
		r.violate("harness", "events: %v", err)
		return
	}
	forget := `UPDATE transfers SET notified_class = NULL,
			classification = CASE WHEN intent_id IS NULL THEN classification ELSE 'partial' END
		WHERE classification <> 'unexplained' AND store_id = '` + shop + `';
		UPDATE intents SET status = CASE WHEN superseded_by IS NOT NULL THEN 'superseded' ELSE 'awaiting_payment' END,
			received = 0, confirmed_sum = 0, overpaid = FALSE, late = FALSE WHERE store_id = '` + shop + `'`
	if r.w.hasSettled {
		forget += `; UPDATE transfers SET settled = 0 WHERE store_id = '` + shop + `'`
	}
	if _, err := pool.Exec(r.ctx, forget); err != nil {
		r.violate("harness", "forget %s's decisions: %v", shop, err)
		return
	}
	for _, n := range r.h.Nets {
		if err := r.w.e.Store.RequestRescan(r.ctx, string(n), 1, r.w.e.Clock.Now()); err != nil {
			r.violate("harness", "rescan: %v", err)
			return
		}
		r.scanNet(n, "rebuild of "+shop)
	}
	if _, err := r.w.e.Service.Sweep(r.ctx); err != nil {
		r.violate("no scanner halts on business state", "deadline sweep failed: %v", err)
		return
	}
	if err := r.w.decideAll(r.ctx, ids); err != nil {
		r.violate("harness", "decide %s's payables: %v", shop, err)
		return
	}
	after, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	r.logf("rebuild of store %s alone: its decisions forgotten, every chain scanned again, its %d intents decided", shop, len(ids))
	if d := before.diff(after, nil); d != "" {
		r.violate(Invariants[invStoreBooks], "store %s rebuilt alone: %s", shop, d)
	}
	var n int64
	var types string
	if err := pool.QueryRow(r.ctx, `SELECT count(*), coalesce(string_agg(type, ' '), '') FROM events WHERE seq > $1 AND store_id = $2`, seq, other).Scan(&n, &types); err != nil {
		r.violate("harness", "events: %v", err)
		return
	}
	if n > 0 {
		r.violate(Invariants[invStoreBooks], "store %s rebuilt alone wrote %d events of store %s: %s", shop, n, other, types)
	}
}

// replayAcross sends a completed idempotent request of an every-store key
// again with its Idempotency-Key and body, for the other store: it is
// another request, so it is never answered with the first store's response
// (it may be refused as a reuse of the key).
func (r *run) replayAcross(q idemRec) {
	scope := q.scope
	if scope == "" {
		scope = "storefront"
	}
	if strings.Contains(scope, "@") || q.status >= 300 {
		return // a store's own key acts for its store only
	}
	from, to := store.DefaultStore, shopB
	if len(q.as) == 2 && q.as[0] == api.StoreHeader {
		from, to = q.as[1], store.DefaultStore
	}
	st, resp := r.mutate(q.method, q.path, scope, q.body, api.StoreHeader, to, "Idempotency-Key", q.key)
	r.logf("%sreplay %s %s key %s of store %s -> %d %s", shopTag(to), q.method, q.path, q.key, from, st, brief(resp))
	if st < 300 && string(resp) == string(q.resp) {
		r.violate(Invariants[invStoreNames], "%s %s with Idempotency-Key %s for store %s answered store %s's response: %d %s",
			q.method, q.path, q.key, to, from, st, shorten(string(resp)))
	}
}
