package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// The config's stores are ensured at start; a key that differs from the
// one the database holds for the store and network, or that another store
// holds, is refused with the key named and nothing changed.
func TestEnsureStoresRefusesAChangedKey(t *testing.T) {
	ctx := context.Background()
	url := devnettest.Database(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	parse := func(stores string) *config.Config {
		t.Helper()
		c, err := config.Parse(strings.NewReader(`
database_url: `+url+`
rates: {sources: [static], min_sources: 1, static: {BTC: "50000"}}
networks:
  bitcoin: {enabled: true, chain: regtest, rpc_url: "http://u:p@127.0.0.1:18443", account_key: "`+addresses.SandboxKeys[payment.Bitcoin]+`"}
methods:
  BTC: {enabled: true}
stores:
`+stores), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	keyed := func(id, key string) string {
		return "  - id: " + id + "\n    colour: \"#123456\"\n    networks: {bitcoin: {account_key: \"" + key + "\"}}\n"
	}
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	if err := daemon.EnsureStores(ctx, parse(keyed("shop-a", storeKeyA)), st, now); err != nil {
		t.Fatal(err)
	}
	// Again, unchanged: nothing to do.
	if err := daemon.EnsureStores(ctx, parse(keyed("shop-a", storeKeyA)), st, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	sh, err := st.Shop(ctx, "shop-a")
	if err != nil || sh.Name != "shop-a" || sh.Colour != "#123456" || !sh.UpdatedAt.Equal(now) {
		t.Fatalf("shop-a: %+v %v", sh, err)
	}
	err = daemon.EnsureStores(ctx, parse(keyed("shop-a", storeKeyB)), st, now)
	if err == nil || !strings.Contains(err.Error(), "stores[0].networks.bitcoin.account_key") || !strings.Contains(err.Error(), "change owner") {
		t.Fatalf("a changed key: %v", err)
	}
	err = daemon.EnsureStores(ctx, parse(keyed("shop-c", storeKeyA)), st, now)
	if err == nil || !strings.Contains(err.Error(), "stores[0].networks.bitcoin.account_key") || !strings.Contains(err.Error(), "another store's") {
		t.Fatalf("another store's key: %v", err)
	}
	if _, err := st.Shop(ctx, "shop-c"); err != store.ErrNotFound {
		t.Fatalf("a refused start created shop-c: %v", err)
	}
	keys, err := st.ShopKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Store != "shop-a" || keys[0].AccountKey != storeKeyA {
		t.Fatalf("keys after the refusals: %+v %v", keys, err)
	}
}

// A store's Solana intents take addresses of its own pool (its lane of the
// free addresses), never the default store's; a store without a pool is
// told its pool is empty.
func TestStoreSolanaIntentsTakeTheStoresPool(t *testing.T) {
	ctx := context.Background()
	e := paywatchtest.New(t, paywatchtest.Only(payment.Solana))
	now := e.Clock.Now()
	for _, id := range []string{"shop-b", "shop-c"} {
		if _, err := e.Store.CreateShop(ctx, store.Shop{ID: id, Name: id}, now); err != nil {
			t.Fatal(err)
		}
	}
	own := map[string]bool{}
	var rows []store.Address
	for i, k := range addresses.SandboxSolanaPool[15:17] {
		a, err := addresses.ParseAddress(payment.Solana, "mainnet", k)
		if err != nil {
			t.Fatal(err)
		}
		own[a.String] = true
		rows = append(rows, store.Address{Network: "solana", Key: a.Key, Address: a.String, Source: "pool", Index: -1,
			CreatedAt: now.Add(time.Duration(i) * time.Microsecond), Store: "shop-b"})
	}
	if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.AddAddresses(ctx, rows); err != nil {
			return err
		}
		return tx.NotifyAddresses(ctx, "solana")
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.Daemon.ReloadStores(ctx); err != nil {
		t.Fatal(err)
	}
	create := func(shop, ref string) (int, views.Intent) {
		status, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": ref,
			"amount_usd": "20.00", "method": "SOL"}, api.StoreHeader, shop)
		var v views.Intent
		if status == 201 {
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
		}
		return status, v
	}
	for _, ref := range []string{"ORD-1", "ORD-2"} {
		status, v := create("shop-b", ref)
		if status != 201 || !own[v.Address] {
			t.Fatalf("shop-b's %s: %d at %s, not of its pool", ref, status, v.Address)
		}
	}
	if status, _ := create("shop-b", "ORD-3"); status != http.StatusServiceUnavailable {
		t.Fatalf("shop-b's pool is used up, yet: %d", status)
	}
	if status, _ := create("shop-c", "ORD-1"); status != http.StatusServiceUnavailable {
		t.Fatalf("shop-c has no pool, yet: %d", status)
	}
	if status, v := create("", "ORD-1"); status != 201 || own[v.Address] {
		t.Fatalf("the default store's ORD-1: %d at %s", status, v.Address)
	}
}
