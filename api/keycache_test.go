package api_test

import (
	"fmt"
	"strings"
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

// Over HTTP, a client that sends many unknown keys gets 401 for each until
// the limit, then 429 rate_limited with Retry-After, while the storefront's
// valid key still answers (issue 34 item 4).
func TestUnknownKeysAreThrottledOverHTTP(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	if status, body := e.Do("GET", "/v1/methods", "storefront", nil); status != 200 {
		t.Fatalf("valid key: %d %s", status, body)
	}
	codes := map[int]int{}
	for i := range 40 {
		name := fmt.Sprintf("guess-%d", i)
		e.Keys[name] = fmt.Sprintf("pw_guess%032d", i)
		status, body := e.Do("GET", "/v1/methods", name, nil)
		codes[status]++
		if status == 429 && !strings.Contains(string(body), `"rate_limited"`) {
			t.Fatalf("429 body %s", body)
		}
	}
	if codes[401] != 30 || codes[429] != 10 {
		t.Fatalf("40 unknown keys from one client answered %v, want 30×401 then 10×429", codes)
	}
	if status, body := e.Do("GET", "/v1/methods", "storefront", nil); status != 200 {
		t.Fatalf("valid key after the throttle: %d %s", status, body)
	}
}
