package api_test

import (
	"testing"

	"github.com/paywatch/paywatch/views"
)

// An every-store key's Idempotency-Key names a request in one store: the
// same key and body sent for another store is refused as a reuse of the
// key, never answered with the first store's intent, and sent again for
// the first store it replays its answer (issue 34; the simulator found it).
func TestIdempotencyKeyIsPerStore(t *testing.T) {
	e := storesEnv(t)
	body := map[string]string{"kind": "order", "reference": "ORD-1", "account": "cust-1", "amount_usd": "12.34", "method": "BTC"}
	st, first := e.Do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "k-1", "Paywatch-Store", "shop-a")
	if st != 201 {
		t.Fatalf("create for shop-a: %d %s", st, first)
	}
	a := decodeInto[views.Intent](t, first)
	st, other := e.Do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "k-1", "Paywatch-Store", "shop-b")
	if st != 409 || errCode(t, other) != "idempotency_mismatch" {
		t.Fatalf("the same key and body for shop-b: %d %s, want 409 idempotency_mismatch (shop-a's intent is %s)", st, other, a.ID)
	}
	st, again := e.Do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "k-1", "Paywatch-Store", "shop-a")
	if st != 201 || string(again) != string(first) {
		t.Fatalf("the same request for shop-a again: %d %s, want its first answer %s", st, again, first)
	}
	if n := e.Counts()["intents"]; n != 1 {
		t.Fatalf("%d intents, want 1", n)
	}
}
