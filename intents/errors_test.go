package intents_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

func code(t *testing.T, body []byte) (string, string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	return e.Error.Code, e.Error.Message
}

func TestRateUnavailableNamesTheFailure(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithQuotes(map[string]string{"LTC": "100"}))
	before := e.Counts()
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": "ORD-RATE", "amount_usd": "10.00", "method": "BTC"})
	c, msg := code(t, body)
	if st != 503 || c != "rate_unavailable" || !strings.Contains(msg, "BTC") {
		t.Fatalf("no BTC price: %d %s", st, body)
	}
	if after := e.Counts(); !maps.Equal(before, after) {
		t.Fatalf("a refused intent changed the database: %v → %v", before, after)
	}
}

func TestEmptySolanaPoolIsAClearError(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Solana))
	for i := 0; i < 10; i++ { // the harness imports 10 pool keys
		e.CreateIntent("order", "ORD-POOL-"+string(rune('a'+i)), "", "1.00", "SOL")
	}
	before := e.Counts()
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": "ORD-POOL-z", "amount_usd": "1.00", "method": "SOL"})
	c, msg := code(t, body)
	if st != 503 || c != "address_pool_empty" || !strings.Contains(msg, "pool import") {
		t.Fatalf("empty pool: %d %s", st, body)
	}
	if after := e.Counts(); !maps.Equal(before, after) {
		t.Fatalf("a refused intent changed the database: %v → %v", before, after)
	}
	st, body = e.Do("GET", "/v1/status", "operator", nil)
	if st != 200 || !strings.Contains(string(body), `"pool_remaining":0`) {
		t.Fatalf("status does not show the empty pool: %s", body)
	}
}

func TestPaidPayableRefusesNewIntentsAndRenewals(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Litecoin), paywatchtest.WithConfig(func(c *config.Config) {
		one := 1
		c.Methods["LTC"].Confirmations = &one
	}))
	v := e.CreateIntent("order", "ORD-PAID", "cust-1", "30.00", "LTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "paid-1")
	e.Sync(payment.Litecoin)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("status %s", got.Status)
	}
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": "ORD-PAID", "account": "cust-1", "amount_usd": "30.00", "method": "LTC"})
	if c, _ := code(t, body); st != 409 || c != "already_paid" {
		t.Fatalf("second intent for a paid order: %d %s", st, body)
	}
	st, body = e.Do("POST", "/v1/intents/"+v.ID+"/renew", "storefront", nil)
	if c, _ := code(t, body); st != 409 || c != "already_paid" {
		t.Fatalf("renewing a paid order: %d %s", st, body)
	}
	st, body = e.Do("GET", "/v1/payables/order/ORD-PAID", "storefront", nil)
	if st != 200 || !strings.Contains(string(body), `"status":"paid"`) || !strings.Contains(string(body), `"paid_by_intent":"`+v.ID+`"`) {
		t.Fatalf("payable: %s", body)
	}
}

// A payment to a superseded intent's address after its deadline is late
// and goes to finance; the renewed intent is unaffected.
func TestLatePaymentToSupersededIntent(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron))
	v := e.CreateIntent("order", "ORD-SUP", "", "12.00", "TRX")
	e.Clock.Advance(31 * 60e9)
	e.Sync(payment.Tron)
	st, body := e.Do("POST", "/v1/intents/"+v.ID+"/renew", "storefront", nil)
	if st != 201 {
		t.Fatalf("renew: %d %s", st, body)
	}
	var renewed struct{ ID string }
	_ = json.Unmarshal(body, &renewed)
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "sup-1")
	e.Chains[payment.Tron].Mine(25)
	e.Sync(payment.Tron)
	old := e.Intent(v.ID)
	if old.Status != "superseded" || len(old.Transfers) != 1 || old.Transfers[0].Classification != "late" || !old.Late {
		t.Fatalf("old intent: %s late=%v %+v", old.Status, old.Late, old.Transfers)
	}
	if n := e.Intent(renewed.ID); n.Status != "awaiting_payment" {
		t.Fatalf("renewed intent: %s", n.Status)
	}
	var unmatched int
	_ = e.Store.Pool().QueryRow(context.Background(), "SELECT count(*) FROM events WHERE type = 'transfer.unmatched'").Scan(&unmatched)
	if unmatched != 1 {
		t.Fatalf("%d transfer.unmatched events, want 1", unmatched)
	}
}
