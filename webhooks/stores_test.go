package webhooks_test

import (
	"context"
	"errors"
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/webhooks"
)

// Two stores, a receiver each and the operator's every-store receiver:
// each store's receiver gets exactly its store's events (intents created,
// transfers seen, paid), the every-store one gets both (issue 34 item 2:
// webhooks per store).
func TestWebhookStoreReceivesOnlyItsStoresEvents(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	e.AddShop("shop-b")
	// shop-b's first, so an unfiltered receiver of the default store would
	// get shop-b's events before its own.
	b1 := e.CreateIntent("order", "ORD-1", "cust-1", "10.00", "BTC")
	b2 := e.CreateIntent("order", "ORD-2", "cust-2", "20.00", "BTC")
	e.IntoShop("shop-b", b1, b2)
	a1 := e.CreateIntent("order", "ORD-1", "cust-1", "10.00", "BTC")
	e.Pay(b1, payment.Native, paywatchtest.Units(b1.AmountBaseUnits), "b1")
	e.Pay(a1, payment.Native, new(big.Int).Div(paywatchtest.Units(a1.AmountBaseUnits), big.NewInt(2)), "a1")
	e.Chains[payment.Bitcoin].Mine(2)
	e.Sync(payment.Bitcoin)

	want := map[string]map[string]bool{"default": {}, "shop-b": {}}
	rows, err := e.Store.Pool().Query(ctx, `SELECT id, store_id FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, shop string
		if err := rows.Scan(&id, &shop); err != nil {
			t.Fatal(err)
		}
		want[shop][id] = true
	}
	rows.Close()
	if len(want["default"]) < 2 || len(want["shop-b"]) < 3 {
		t.Fatalf("events: %d of the default store, %d of shop-b; want a creation and a payment of each", len(want["default"]), len(want["shop-b"]))
	}

	opt := webhooks.Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Poll: 100 * time.Millisecond, Batch: 2}
	recv := map[string]*receiver{}
	var senders []*running
	for name, shop := range map[string]string{"a": "default", "b": "shop-b", "all": ""} {
		recv[name] = newReceiver("s3cret-" + name)
		srv := httptest.NewServer(recv[name])
		defer srv.Close()
		senders = append(senders, start(e.Store, webhooks.Endpoint{Name: name, URL: srv.URL, Secret: []byte("s3cret-" + name), Store: shop}, opt))
	}
	total := len(want["default"]) + len(want["shop-b"])
	waitFor(t, "every receiver's events", 30*time.Second, func() bool {
		return recv["a"].unique() >= len(want["default"]) && recv["b"].unique() >= len(want["shop-b"]) && recv["all"].unique() >= total
	})
	for _, s := range senders {
		s.stop(t)
	}
	for name, shop := range map[string]string{"a": "default", "b": "shop-b"} {
		r := recv[name]
		r.mu.Lock()
		for id := range r.seen {
			if !want[shop][id] {
				t.Errorf("%s's receiver (store %s) got event %s of another store", name, shop, id)
			}
		}
		if len(r.seen) != len(want[shop]) {
			t.Errorf("%s's receiver got %d events, want %d", name, len(r.seen), len(want[shop]))
		}
		r.mu.Unlock()
	}
	if n := recv["all"].unique(); n != total {
		t.Errorf("the every-store receiver got %d events, want %d", n, total)
	}
	eps, err := e.Store.WebhookEndpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if wantShop := map[string]string{"a": "default", "b": "shop-b", "all": ""}[ep.Name]; ep.Store != wantShop {
			t.Errorf("endpoint %s is stored for store %q, want %q", ep.Name, ep.Store, wantShop)
		}
	}

	// The config's webhooks[].store reaches the endpoint.
	fromCfg, err := webhooks.FromConfig([]config.Webhook{{Name: "b", URL: "https://shop-b.example/hook", SecretEnv: "B_SECRET", Store: "shop-b"}},
		func(string) string { return "s3cret-of-thirty-two-bytes-or-more-0123456789" })
	if err != nil || len(fromCfg) != 1 || fromCfg[0].Store != "shop-b" {
		t.Errorf("FromConfig: %v, %+v; want the endpoint of store shop-b", err, fromCfg)
	}

	// An endpoint of a store that does not exist refuses to start, saying so.
	r := start(e.Store, webhooks.Endpoint{Name: "ghost", URL: "http://127.0.0.1:1/", Secret: []byte("s3cret-ghost"), Store: "no-such-shop"}, opt)
	err = <-r.done
	r.cancel()
	if err == nil || !strings.Contains(err.Error(), `store "no-such-shop" does not exist`) || errors.Is(err, context.Canceled) {
		t.Errorf("a sender for an unknown store: %v", err)
	}
}
