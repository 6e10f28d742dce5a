package intents_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"

	"github.com/paywatch/paywatch/intents/intentstest"
	"github.com/paywatch/paywatch/payment"
)

func TestExactBTCPaymentBecomesPaidAfterConfirmations(t *testing.T) {
	e := intentstest.New(t)
	v := e.CreateIntent("order", "ORD-1", "cust-1", "249.00", "BTC")
	if v.Status != "awaiting_payment" || v.AmountBaseUnits != "498000" || v.Address == "" {
		t.Fatalf("created intent: %+v", v)
	}
	e.Pay(v, payment.Native, intentstest.Units(v.AmountBaseUnits), "pay-1")
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
	e.Pay(v, payment.Native, intentstest.Units(v.AmountBaseUnits), "pay-2")
	e.Sync(payment.Bitcoin)
	got = e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" {
		t.Fatalf("after duplicate: %+v", got)
	}
}

func TestDeadlineExpiresUnpaidIntent(t *testing.T) {
	e := intentstest.New(t)
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
	e := intentstest.New(t, intentstest.Only(payment.Tron), intentstest.WithConfig(func(c *config.Config) {
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
