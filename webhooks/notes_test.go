package webhooks_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/webhooks"
)

// Issue 22, item 11: a transfer.resolved webhook tells the storefront what
// finance decided, without finance's note or the clerk's key name.
func TestResolvedWebhookLeavesOutFinanceNotes(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	v := e.CreateIntent("order", "ORD-WHN", "cust-whn", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "whn-pay")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "whn-dup")
	e.Chains[payment.Bitcoin].Mine(2)
	e.Sync(payment.Bitcoin)
	dup := e.Intent(v.ID).Transfers[1].ID
	if s, b := e.Do("POST", "/v1/transfers/"+dup+"/resolve", "finance", map[string]string{
		"action": "credit_account", "account": "cust-whn", "note": "INTERNAL: fraud desk says keep an eye"}); s != 200 {
		t.Fatalf("resolve: %d %s", s, b)
	}
	var mu sync.Mutex
	var resolved []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"transfer.resolved"`) {
			mu.Lock()
			resolved = append(resolved, string(body))
			mu.Unlock()
		}
	}))
	defer srv.Close()
	run := start(e.Store, webhooks.Endpoint{Name: "shop", URL: srv.URL, Secret: []byte("s3cret")},
		webhooks.Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Poll: 50 * time.Millisecond})
	waitFor(t, "the transfer.resolved delivery", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(resolved) > 0
	})
	run.stop(t)
	body := resolved[0]
	if strings.Contains(body, "fraud desk") || strings.Contains(body, "finance-key") || strings.Contains(body, `"note"`) || strings.Contains(body, `"actor"`) {
		t.Fatalf("webhook body carries finance's note or actor: %s", body)
	}
	if !strings.Contains(body, `"credit_account"`) || !strings.Contains(body, dup) {
		t.Fatalf("webhook body lost the decision: %s", body)
	}
}

// Issue 22, item 4: an endpoint with account_prefix gets only the events of
// those accounts.
func TestWebhookAccountPrefixFiltersEvents(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	e.CreateIntent("order", "ORD-P2", "shop2:c", "10.00", "BTC")
	e.CreateIntent("order", "ORD-P0", "", "10.00", "BTC")
	first := e.CreateIntent("order", "ORD-P1", "shop1:c", "10.00", "BTC")
	e.CreateIntent("order", "ORD-P3", "shop2:d", "10.00", "BTC")
	last := e.CreateIntent("order", "ORD-P4", "shop1:d", "10.00", "BTC")
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
	}))
	defer srv.Close()
	run := start(e.Store, webhooks.Endpoint{Name: "shop1", URL: srv.URL, Secret: []byte("s3cret"), AccountPrefix: "shop1:"},
		webhooks.Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Poll: 50 * time.Millisecond})
	waitFor(t, "the last shop1 event", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && strings.Contains(got[len(got)-1], last.ID)
	})
	run.stop(t)
	if len(got) != 2 || !strings.Contains(got[0], first.ID) {
		t.Fatalf("deliveries %d, want the 2 intent.created of shop1: %v", len(got), got)
	}
	for _, b := range got {
		if !strings.Contains(b, `"account":"shop1:`) {
			t.Fatalf("delivered another account's event: %s", b)
		}
	}
}
