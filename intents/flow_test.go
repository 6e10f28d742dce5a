package intents_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

func TestExactBTCPaymentBecomesPaidAfterConfirmations(t *testing.T) {
	e := paywatchtest.New(t)
	v := e.CreateIntent("order", "ORD-1", "cust-1", "249.00", "BTC")
	if v.Status != "awaiting_payment" || v.AmountBaseUnits != "498000" || v.Address == "" {
		t.Fatalf("created intent: %+v", v)
	}
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "pay-1")
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "detected" || len(got.Transfers) != 1 || got.Transfers[0].Confirmations != 1 {
		t.Fatalf("after 1 block: status %s transfers %+v", got.Status, got.Transfers)
	}
	e.Chains[payment.Bitcoin].Mine(1)
	e.Sync(payment.Bitcoin)
	got = e.Intent(v.ID)
	if got.Status != "paid" || got.Transfers[0].Classification != "settles" || got.PaidUSD != "249.00" {
		t.Fatalf("after 2 blocks: %+v", got)
	}
	// A second full payment to the paid intent is a duplicate for finance.
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "pay-2")
	e.Sync(payment.Bitcoin)
	got = e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" {
		t.Fatalf("after duplicate: %+v", got)
	}
}

func TestDeadlineExpiresUnpaidIntent(t *testing.T) {
	e := paywatchtest.New(t)
	v := e.CreateIntent("order", "ORD-2", "", "10.00", "ETH")
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := e.Intent(v.ID); got.Status != "expired" {
		t.Fatalf("status %s, want expired", got.Status)
	}
}

func TestSweepDrainsEveryDueIntent(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["tron"].Gap = 600
	}))
	const n = 520 // more than one sweep batch
	for i := 0; i < n; i++ {
		e.CreateIntent("order", fmt.Sprintf("ORD-SW-%d", i), "", "1.00", "TRX")
	}
	e.Clock.Advance(31 * time.Minute)
	got, err := e.Service.Sweep(t.Context())
	if err != nil || got != n {
		t.Fatalf("swept %d (%v), want %d", got, err, n)
	}
	var open int
	if err := e.Store.Pool().QueryRow(t.Context(), "SELECT count(*) FROM intents WHERE status <> 'expired'").Scan(&open); err != nil || open != 0 {
		t.Fatalf("%d intents not expired (%v)", open, err)
	}
}

// Event bodies are rendered from the transaction's own decision; they must
// equal what the API shows once it committed.
func TestEventBodiesEqualTheCommittedState(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	v := e.CreateIntent("order", "ORD-EV", "cust-ev", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "ev-1")
	e.Chains[payment.Bitcoin].Mine(1)
	e.Pay(v, payment.Native, paywatchtest.Units("700"), "ev-dup") // a later, second payment
	e.Sync(payment.Bitcoin)
	status, body := e.Do("GET", "/v1/intents/"+v.ID, "storefront", nil)
	if status != 200 {
		t.Fatalf("get: %d %s", status, body)
	}
	var api, ev map[string]any
	if err := json.Unmarshal(body, &api); err != nil {
		t.Fatal(err)
	}
	var data []byte
	if err := e.Store.Pool().QueryRow(t.Context(), "SELECT data FROM events WHERE intent_id = $1 AND type = 'intent.paid'", v.ID).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatal(err)
	}
	// The paying block was applied with the payment; the duplicate came one
	// block later, so compare the fields that block did not change.
	for _, k := range []string{"status", "received_base_units", "paid_at", "detected_at", "paid_usd", "overpaid", "late", "address", "amount_base_units"} {
		if fmt.Sprint(ev[k]) != fmt.Sprint(api[k]) {
			t.Errorf("intent.paid %s = %v, API shows %v", k, ev[k], api[k])
		}
	}
	var tr map[string]any
	if err := e.Store.Pool().QueryRow(t.Context(), "SELECT data FROM events WHERE intent_id = $1 AND type = 'transfer.unmatched'", v.ID).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	var dup map[string]any
	for _, x := range api["transfers"].([]any) {
		if m := x.(map[string]any); m["id"] == tr["id"] {
			dup = m
		}
	}
	if dup == nil || tr["classification"] != "duplicate" {
		t.Fatalf("transfer.unmatched %v is not the duplicate of %v", tr, api["transfers"])
	}
	for k, want := range dup {
		if fmt.Sprint(tr[k]) != fmt.Sprint(want) {
			t.Errorf("transfer.unmatched %s = %v, API shows %v", k, tr[k], want)
		}
	}
}
