package api_test

import (
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A revoked key stops working on an instance that cached it within the
// cache's bound (5 s, the keyTTL of keycache.go): the cache spares a query
// per request without letting revocation wait longer than that.
func TestRevokedKeyStopsWithinTheCacheBound(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	plain, _, err := e.Store.CreateAPIKey(t.Context(), "revocable-key", []string{"storefront"}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.Keys["revocable"] = plain
	if status, body := e.Do("GET", "/v1/methods", "revocable", nil); status != 200 {
		t.Fatalf("before revocation: %d %s", status, body)
	}
	if err := e.Store.RevokeAPIKey(t.Context(), "revocable-key", e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(5 * time.Second)
	if status, body := e.Do("GET", "/v1/methods", "revocable", nil); status != 401 {
		t.Fatalf("%s after revocation: %d %s, want 401", 5*time.Second, status, body)
	}
}
