package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
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
