package api_test

import (
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// One vocabulary (issue 36 item 10): a transfer names its asset as its
// intent and GET /v1/methods do (BTC, not the stored "native"), in the
// intent's answer and in GET /v1/transfers/{id}; and a debit of an order
// already paid in crypto is already_paid, whatever account or amount the
// debit names, not a conflict.
func TestTransfersNameAssetsAsIntentsDoAndADebitOfAPaidOrderIsAlreadyPaid(t *testing.T) {
	e := paywatchtest.New(t)
	v := e.CreateIntent("order", "ORD-AP", "", "25.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "pay-ap")
	e.Chains[payment.Bitcoin].Mine(2)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 1 {
		t.Fatalf("intent: %+v", got)
	}
	if got.Asset != "BTC" || got.Transfers[0].Asset != got.Asset {
		t.Errorf("intent asset %q, its transfer's %q; want both BTC", got.Asset, got.Transfers[0].Asset)
	}
	status, body := e.Do("GET", "/v1/transfers/"+got.Transfers[0].ID, "finance", nil)
	if tr := decodeInto[views.Transfer](t, body); status != 200 || tr.Asset != "BTC" {
		t.Errorf("GET /v1/transfers/{id}: %d asset %q, want BTC", status, tr.Asset)
	}
	for _, body := range []map[string]string{
		{"reference": "ORD-AP", "amount_usd": "25.00"},
		{"reference": "ORD-AP", "amount_usd": "30.00"},
	} {
		status, resp := e.Do("POST", "/v1/accounts/cust-ap/debits", "storefront", body)
		if status != 409 || apiCode(resp) != "already_paid" {
			t.Errorf("debit %v of an order paid in crypto: %d %s, want 409 already_paid", body, status, resp)
		}
	}
}
