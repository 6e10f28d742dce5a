package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// Issue 22, item 5: each API key's creations go through a token bucket
// (limits.creates_per_minute, limits.create_burst); an empty bucket is 429
// rate_limited with Retry-After, for that key only, and takes no address.
func TestCreationTokenBucketPerKey(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Limits.CreatesPerMinute, c.Limits.CreateBurst = 2, 2
	}))
	addKey(t, e, "shop-a", "", "storefront")
	create := func(key string, i int) (int, string, http.Header) {
		req, _ := http.NewRequest("POST", e.Server.URL+"/v1/intents", strings.NewReader(fmt.Sprintf(
			`{"kind":"order","reference":"ORD-B%s%d","amount_usd":"10.00","method":"BTC"}`, key, i)))
		req.Header.Set("Authorization", "Bearer "+e.Keys[key])
		resp, err := e.Server.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String(), resp.Header
	}
	for i := range 2 {
		if s, body, _ := create("shop-a", i); s != 201 {
			t.Fatalf("creation %d: %d %s", i, s, body)
		}
	}
	before := e.Counts()
	s, body, h := create("shop-a", 2)
	if s != 429 || !strings.Contains(body, `"rate_limited"`) || h.Get("Retry-After") != "30" {
		t.Fatalf("third creation: %d %s Retry-After %q, want 429 and 30", s, body, h.Get("Retry-After"))
	}
	if after := e.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused creation changed the records: %v -> %v", before, after)
	}
	// Another key has its own bucket.
	if s, body, _ := create("storefront", 0); s != 201 {
		t.Fatalf("other key: %d %s", s, body)
	}
	// 30 s later one token is back, and only one.
	e.Clock.Advance(30 * time.Second)
	if s, body, _ := create("shop-a", 3); s != 201 {
		t.Fatalf("after Retry-After: %d %s", s, body)
	}
	if s, _, _ := create("shop-a", 4); s != 429 {
		t.Fatalf("second creation after 30 s: %d, want 429", s)
	}
}
