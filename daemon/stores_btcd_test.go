package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Account keys of seeds no wallet holds (sha256("paywatch store test a"),
// "b"), m/84'/1'/0', for the stores' tests.
const (
	storeKeyA = "tpubDCSQ2aMyQRi9dBGxoG8Xx3FR93fHonMfvRCc8xtW97iD1FyZQxtEeLiasgr2RgpBbofCRZvkJTyjEcoD3K8isLrA49yPYCYYVVmkchmcBrz"
	storeKeyB = "tpubDCM3fYoVu75K7pyQkiBKWjbkFAseES1vDrSxKRKFKQCUzWVVXi647rqXMuDMW8TM8rza6jM4NNKbfJ9fc4kVr1DQTPAF9uGBR553JbwEnwU"
)

// Two stores on one instance scanning a real btcd: shop-a from the config
// file, shop-b created with its key while the daemon runs. Each store's
// intent derives its address from its own key, both are paid on the node,
// and each transfer is its store's. The same reference in both stores is
// two orders.
func TestStoresDeriveFromTheirOwnKeysAndArePaidOnBtcd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, err := devnet.StartBtcd(ctx, t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	src, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: node.RPCURL,
		HTTPClient: &http.Client{Transport: tr, Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, src),
		paywatchtest.WithConfig(func(c *config.Config) {
			c.Methods[payment.BTC].Confirmations = new(int)
			*c.Methods[payment.BTC].Confirmations = 6
			c.Stores = []config.Store{{ID: "shop-a", Name: "Shop A", Confirmations: map[payment.Method]int{payment.BTC: 1},
				Networks: map[payment.Network]config.StoreNetwork{payment.Bitcoin: {AccountKey: storeKeyA}}}}
		}))

	// shop-b arrives while the daemon runs, as `paywatch stores create` and
	// `stores add-key` make it.
	fpB, err := e.Config.CheckStoreKey("key", payment.Bitcoin, storeKeyB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.CreateShop(ctx, store.Shop{ID: "shop-b", Name: "Shop B", Settings: store.ShopSettings{Confirmations: map[string]int{"BTC": 1}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	create := func(shop string) (int, views.Intent) {
		status, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-1",
			"account": "cust-1", "amount_usd": "50.00", "method": "BTC"}, api.StoreHeader, shop)
		var v views.Intent
		if status == 201 {
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
		}
		return status, v
	}
	if status, _ := create("shop-b"); status != http.StatusServiceUnavailable {
		t.Fatalf("shop-b without a key: %d, want 503 chain_unavailable", status)
	}
	if err := e.Store.AddShopKey(ctx, store.ShopKey{Store: "shop-b", Network: "bitcoin", AccountKey: storeKeyB, Fingerprint: fpB}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.Daemon.ReloadStores(ctx); err != nil {
		t.Fatal(err)
	}

	intents := map[string]views.Intent{}
	for shop, key := range map[string]string{"shop-a": storeKeyA, "shop-b": storeKeyB} {
		status, v := create(shop)
		if status != 201 {
			t.Fatalf("create in %s: %d", shop, status)
		}
		der, err := addresses.NewDeriver(payment.Bitcoin, key, "regtest")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := der.Derive(0)
		if v.Address != want.String {
			t.Fatalf("%s's address %s is not index 0 of its own key (%s)", shop, v.Address, want.String)
		}
		if v.ConfirmationsRequired != 1 {
			t.Fatalf("%s's intent requires %d confirmations, the store says 1", shop, v.ConfirmationsRequired)
		}
		intents[shop] = v
	}
	if intents["shop-a"].ID == intents["shop-b"].ID {
		t.Fatal("the same reference in two stores is one intent")
	}
	var outs []devnet.Output
	for _, v := range intents {
		a, err := addresses.ParseAddress(payment.Bitcoin, "regtest", v.Address)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, devnet.Output{Script: a.Key, Amount: mustInt64(t, v.AmountBaseUnits)})
	}
	if _, err := node.PayMany(ctx, outs); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Generate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.Sync(payment.Bitcoin)
	for shop, v := range intents {
		status, body := e.Do("GET", "/v1/intents/"+v.ID, "storefront", nil, api.StoreHeader, shop)
		var got views.Intent
		if status != 200 || json.Unmarshal(body, &got) != nil || got.Status != payment.IntentPaid || len(got.Transfers) != 1 {
			t.Fatalf("%s's intent after the block: %d %s", shop, status, body)
		}
		trs, err := e.Store.TransfersByIntent(ctx, v.ID)
		if err != nil || len(trs) != 1 || trs[0].Store != shop {
			t.Fatalf("%s's transfers: %+v %v", shop, trs, err)
		}
	}
	// A store's key reads its own intent, not the other store's.
	plain, _, err := e.Store.CreateStoreAPIKey(ctx, "shop-b-key", []string{"storefront"}, "shop-b", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.Keys["shop-b"] = plain
	if status, _ := e.Do("GET", "/v1/intents/"+intents["shop-b"].ID, "shop-b", nil); status != 200 {
		t.Fatalf("shop-b's key reading its intent: %d", status)
	}
	if status, _ := e.Do("GET", "/v1/intents/"+intents["shop-a"].ID, "shop-b", nil); status != http.StatusNotFound {
		t.Fatalf("shop-b's key reading shop-a's intent: %d", status)
	}
}

func mustInt64(t *testing.T, s string) int64 {
	t.Helper()
	n := paywatchtest.Units(s)
	if !n.IsInt64() {
		t.Fatalf("amount %s", s)
	}
	return n.Int64()
}
