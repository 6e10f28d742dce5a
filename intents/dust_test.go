package intents_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// An order too small to pay (its crypto amount is below the method's dust
// minimum, so the exact payment would be classified dust) is refused at
// creation, naming the smallest USD amount at the current rate.
func TestCreationRefusesAmountsBelowTheDustMinimum(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Tron))
	before := e.Counts()
	// 0.02 USD at 50000 USD/BTC is 40 sat, below the 546-sat minimum.
	for _, usd := range []string{"0.02", "0.27"} {
		st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
			"kind": "order", "reference": "ORD-DUST-" + usd, "amount_usd": usd, "method": "BTC"})
		c, msg := code(t, body)
		if st != 400 || c != "invalid_amount" || !strings.Contains(msg, "0.28 USD") || !strings.Contains(msg, "0.00000546 BTC") {
			t.Fatalf("%s USD BTC order: %d %s, want 400 invalid_amount naming 0.28 USD", usd, st, body)
		}
	}
	if after := e.Counts(); !maps.Equal(before, after) {
		t.Fatalf("a refused intent changed the database: %v → %v", before, after)
	}
	if v := e.CreateIntent("order", "ORD-DUST-OK", "", "0.28", "BTC"); v.AmountBaseUnits != "560" {
		t.Fatalf("0.28 USD BTC order: %s sat, want 560", v.AmountBaseUnits)
	}

	st, body := e.Do("GET", "/v1/methods", "storefront", nil)
	if st != 200 {
		t.Fatalf("methods: %d %s", st, body)
	}
	var ms []struct {
		Method       string  `json:"method"`
		Available    bool    `json:"available"`
		DustMin      string  `json:"dust_min"`
		MinAmountUSD *string `json:"min_amount_usd"`
	}
	if err := json.Unmarshal(body, &ms); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"BTC": {"0.00000546", "0.28"}, "TRX": {"0.1", "0.03"}, "USDT-TRC20": {"0.01", "0.01"}}
	for _, m := range ms {
		w, ok := want[m.Method]
		if !ok {
			if m.MinAmountUSD != nil {
				t.Fatalf("%s is disabled but shows a minimum %s", m.Method, *m.MinAmountUSD)
			}
			continue
		}
		if !m.Available || m.MinAmountUSD == nil || m.DustMin != w[0] || *m.MinAmountUSD != w[1] {
			t.Fatalf("%s: %+v, want dust_min %s and min_amount_usd %s", m.Method, m, w[0], w[1])
		}
		delete(want, m.Method)
	}
	if len(want) != 0 {
		t.Fatalf("methods missing: %v", want)
	}
}
