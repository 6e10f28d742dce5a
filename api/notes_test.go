package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// financeNote is the note finance keeps with a decision: internal.
const financeNote = "INTERNAL: customer flagged by fraud desk"

// creditDuplicateWithNote pays an order twice and has finance credit the
// duplicate to the account with financeNote; it returns the intent and
// transfer ids.
func creditDuplicateWithNote(t *testing.T, e *paywatchtest.Env) (string, string) {
	t.Helper()
	v := e.CreateIntent("order", "ORD-NOTE", "cust-note", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "note-pay")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "note-dup")
	e.Chains[payment.Bitcoin].Mine(2)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" {
		t.Fatalf("transfers %+v", got.Transfers)
	}
	dup := got.Transfers[1].ID
	if s, b := resolve(e, dup, "finance", map[string]string{"action": "credit_account", "account": "cust-note", "note": financeNote}); s != 200 {
		t.Fatalf("credit_account: %d %s", s, b)
	}
	return v.ID, dup
}

// Issue 22, item 11: the resolution note and the clerk's key name stay in
// finance's views; a storefront key's intent, payable and event feed
// answers leave them out (the decision itself is shown).
func TestFinanceNotesStayOutOfStorefrontViews(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	intentID, dup := creditDuplicateWithNote(t, e)
	leaks := func(what, body string) {
		t.Helper()
		if strings.Contains(body, "fraud desk") || strings.Contains(body, "finance-key") || strings.Contains(body, `"note"`) || strings.Contains(body, `"actor"`) {
			t.Fatalf("%s shows finance's note or actor to a storefront key: %s", what, body)
		}
	}
	for _, path := range []string{"/v1/intents/" + intentID, "/v1/payables/order/ORD-NOTE", "/v1/events?limit=1000"} {
		s, body := e.Do("GET", path, "storefront", nil)
		if s != 200 {
			t.Fatalf("%s: %d %s", path, s, body)
		}
		leaks(path, string(body))
		if !strings.Contains(string(body), `"credit_account"`) {
			t.Fatalf("%s does not show the decision: %s", path, body)
		}
	}
	// A key with the finance scope sees them, in every view.
	tr := transferView(t, e, dup)
	if tr.Resolution == nil || tr.Resolution.Note != financeNote || tr.Resolution.Actor != "finance-key" {
		t.Fatalf("finance's transfer view: %+v", tr.Resolution)
	}
	s, body := e.Do("GET", "/v1/events?type=transfer.resolved", "all", nil)
	if s != 200 || !strings.Contains(string(body), "fraud desk") {
		t.Fatalf("finance's event feed: %d %s", s, body)
	}
	var page struct {
		Events []struct {
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	s, body = e.Do("GET", "/v1/events?type=transfer.resolved", "storefront", nil)
	if err := json.Unmarshal(body, &page); s != 200 || err != nil || len(page.Events) != 1 {
		t.Fatalf("storefront's transfer.resolved: %d %s", s, body)
	}
}
