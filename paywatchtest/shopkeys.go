package paywatchtest

import (
	"context"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// AddShopKey gives store shop (AddShop) its extended key for network n,
// checked as `paywatch stores add-key` checks it, and has the daemon read
// the stores again: the shop's next intent on n derives from its own key,
// through the whole pipeline (the daemon's stores reload).
func (e *Env) AddShopKey(shop string, n payment.Network, key string) {
	e.T.Helper()
	ctx := context.Background()
	fp, err := e.Config.CheckStoreKey("key", n, key)
	if err != nil {
		e.T.Fatalf("store %s's %s key: %v", shop, n, err)
	}
	if err := e.Store.AddShopKey(ctx, store.ShopKey{Store: shop, Network: string(n), AccountKey: key, Fingerprint: fp}, e.Clock.Now()); err != nil {
		e.T.Fatalf("store %s's %s key: %v", shop, n, err)
	}
	if err := e.Daemon.ReloadStores(ctx); err != nil {
		e.T.Fatalf("reload the stores: %v", err)
	}
}
