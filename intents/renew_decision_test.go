package intents_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// Renewing an underpaid intent supersedes it, and a superseded intent's
// transfers are late (matcher rule 7). The renewal decides the old intent
// again in its transaction, so what is stored is what the decision says:
// deciding it once more changes nothing, and a rescan reproduces it. The
// simulator found the renewal leaving the partial payment "partial" and the
// intent not late, which a full rescan then turned late (seed 7032).
func TestRenewalDecidesTheSupersededIntentAgain(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Litecoin))
	ltc := payment.Litecoin
	x := e.CreateIntent("topup", "TOP-R", "cust-r", "100.00", "LTC")
	half := new(big.Int).Div(paywatchtest.Units(x.AmountBaseUnits), big.NewInt(2))
	e.Pay(x, payment.Native, half, "renew-half")
	e.Chains[ltc].Mine(5)
	e.Sync(ltc)
	if tr := e.Intent(x.ID).Transfers; len(tr) != 1 || tr[0].Classification != "partial" {
		t.Fatalf("half payment before the deadline: %+v", tr)
	}
	e.Clock.Advance(31 * time.Minute)
	e.Sync(ltc)
	if st, body := e.Do("POST", "/v1/intents/"+x.ID+"/renew", "storefront", nil); st != 201 {
		t.Fatalf("renew: %d %s", st, body)
	}
	renewed := e.Intent(x.ID)
	if renewed.Status != "superseded" {
		t.Fatalf("renewed intent: %s", renewed.Status)
	}
	err := e.Store.InTx(context.Background(), func(tx *store.Tx) error {
		return e.Service.Redecide(context.Background(), tx, x.ID, e.Clock.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	again := e.Intent(x.ID)
	if again.Late != renewed.Late || again.Status != renewed.Status ||
		again.Transfers[0].Classification != renewed.Transfers[0].Classification {
		t.Fatalf("deciding the renewed intent again changed it: late %v -> %v, %s -> %s, transfer %s -> %s",
			renewed.Late, again.Late, renewed.Status, again.Status, renewed.Transfers[0].Classification, again.Transfers[0].Classification)
	}
}
