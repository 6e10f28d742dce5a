package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// addKey creates a key with scopes bound to prefix ("" = unbound) and
// makes it usable as e.Do(..., name, ...).
func addKey(t *testing.T, e *paywatchtest.Env, name, prefix string, scopes ...string) {
	t.Helper()
	plain, _, err := e.Store.CreateBoundAPIKey(context.Background(), name, scopes, prefix, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.Keys[name] = plain
}

// Issue 22, item 4: the finer scopes read, intents and debit (storefront
// is all three) each allow only their routes.
func TestFinerScopesAllowOnlyTheirRoutes(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	addKey(t, e, "reader", "", "read")
	addKey(t, e, "creator", "", "intents")
	addKey(t, e, "debiter", "", "debit")
	v := e.CreateIntent("order", "ORD-SC", "cust-sc", "10.00", "BTC")
	create := map[string]string{"kind": "order", "reference": "ORD-SC2", "account": "cust-sc", "amount_usd": "10.00", "method": "BTC"}
	debit := map[string]string{"reference": "ORD-SC3", "amount_usd": "1.00"}
	cases := []struct {
		key, method, path string
		body              any
		want              int
	}{
		{"reader", "GET", "/v1/intents/" + v.ID, nil, 200},
		{"reader", "GET", "/v1/methods", nil, 200},
		{"reader", "GET", "/v1/events", nil, 200},
		{"reader", "GET", "/v1/accounts/cust-sc/balance", nil, 200},
		{"reader", "POST", "/v1/intents", create, 403},
		{"reader", "POST", "/v1/intents/" + v.ID + "/report", map[string]string{}, 403},
		{"reader", "POST", "/v1/accounts/cust-sc/debits", debit, 403},
		{"creator", "GET", "/v1/intents/" + v.ID, nil, 403},
		{"creator", "GET", "/v1/events", nil, 403},
		{"creator", "POST", "/v1/accounts/cust-sc/debits", debit, 403},
		{"creator", "POST", "/v1/intents", create, 201},
		{"debiter", "GET", "/v1/accounts/cust-sc/balance", nil, 403},
		{"debiter", "POST", "/v1/intents", create, 403},
		{"debiter", "POST", "/v1/accounts/cust-sc/debits", debit, 409}, // allowed; no balance
		{"storefront", "GET", "/v1/accounts/cust-sc/ledger", nil, 200},
	}
	for _, c := range cases {
		if s, body := e.Do(c.method, c.path, c.key, c.body); s != c.want {
			t.Errorf("%s %s with %s: %d %s, want %d", c.method, c.path, c.key, s, body, c.want)
		}
	}
}

// Issue 22, item 4: a key bound to an account prefix reads and changes only
// the accounts that start with it: anything else is 403 with no data, and
// its event feed has only its accounts' events.
func TestKeyBoundToAnAccountPrefix(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	addKey(t, e, "shop1", "shop1:", "storefront")
	other := e.CreateIntent("order", "ORD-S2", "shop2:cust", "10.00", "BTC")
	e.CreateIntent("order", "ORD-NOACC", "", "10.00", "BTC")
	s, body := e.Do("POST", "/v1/intents", "shop1", map[string]string{"kind": "order", "reference": "ORD-S1", "account": "shop1:cust", "amount_usd": "10.00", "method": "BTC"})
	if s != 201 {
		t.Fatalf("create in the prefix: %d %s", s, body)
	}
	var mine views.Intent
	if err := json.Unmarshal(body, &mine); err != nil {
		t.Fatal(err)
	}
	if s, body = e.Do("GET", "/v1/intents/"+mine.ID, "shop1", nil); s != 200 {
		t.Fatalf("own intent: %d %s", s, body)
	}
	refused := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-X2", "account": "shop2:cust", "amount_usd": "10.00", "method": "BTC"}},
		{"POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-X3", "amount_usd": "10.00", "method": "BTC"}},
		{"GET", "/v1/intents/" + other.ID, nil},
		{"GET", "/v1/intents/" + other.ID + "/qr.png", nil},
		{"POST", "/v1/intents/" + other.ID + "/report", map[string]string{}},
		{"POST", "/v1/intents/" + other.ID + "/renew", map[string]string{}},
		{"GET", "/v1/payables/order/ORD-S2", nil},
		{"GET", "/v1/payables/order/ORD-NOACC", nil},
		{"GET", "/v1/accounts/shop2:cust/balance", nil},
		{"GET", "/v1/accounts/shop2:cust/ledger", nil},
		{"POST", "/v1/accounts/shop2:cust/debits", map[string]string{"reference": "ORD-S2", "amount_usd": "1.00"}},
		{"GET", "/v1/accounts/shop1/balance", nil}, // "shop1" does not start with "shop1:"
	}
	for _, c := range refused {
		s, body := e.Do(c.method, c.path, "shop1", c.body)
		if s != 403 || strings.Contains(string(body), other.Address) || strings.Contains(string(body), `"amount_usd"`) {
			t.Errorf("%s %s: %d %s, want 403 with no data", c.method, c.path, s, body)
		}
	}
	// Nothing was created, reported or renewed for others.
	if got := e.Intent(other.ID); got.Status != "awaiting_payment" || got.ReportedAt != nil || got.SupersededBy != nil {
		t.Fatalf("the other shop's intent changed: %+v", got)
	}
	var n int
	_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM payables WHERE reference IN ('ORD-X2', 'ORD-X3')`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d payables created outside the prefix", n)
	}
	// The event feed: only shop1's events.
	s, body = e.Do("GET", "/v1/events?limit=1000", "shop1", nil)
	var page struct {
		Events []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
		Next string `json:"next"`
	}
	if err := json.Unmarshal(body, &page); s != 200 || err != nil || len(page.Events) == 0 {
		t.Fatalf("events: %d %s", s, body)
	}
	for _, ev := range page.Events {
		if !strings.Contains(string(ev.Data), `"account":"shop1:cust"`) {
			t.Fatalf("event %s of another account: %s", ev.Type, ev.Data)
		}
	}
	// The cursor moves past what was left out.
	_, all := e.Do("GET", "/v1/events?limit=1000", "storefront", nil)
	var allPage struct {
		Next string `json:"next"`
	}
	_ = json.Unmarshal(all, &allPage)
	if page.Next != allPage.Next {
		t.Fatalf("bound key's cursor %s, the feed's %s", page.Next, allPage.Next)
	}
}
