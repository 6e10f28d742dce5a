package checkout_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// payment_page_url is on the created intent, on every read, in its
// events, and the same each time; return_url is kept, checked against
// checkout.return_hosts (a refused one creates nothing), and carried over
// by a renewal.
func TestAPIPageURLAndReturnURL(t *testing.T) {
	s := newSite(t, siteOptions{})
	in := s.create(t, "ORD-API", "10.00", map[string]string{"return_url": "https://shop.example.com/orders/ORD-API?x=1"})
	path := s.pageOf(t, in)
	if in.ReturnURL != "https://shop.example.com/orders/ORD-API?x=1" {
		t.Fatalf("return_url %q", in.ReturnURL)
	}
	got := s.Intent(in.ID)
	if got.PaymentPageURL != in.PaymentPageURL || got.ReturnURL != in.ReturnURL {
		t.Fatalf("read: %q %q", got.PaymentPageURL, got.ReturnURL)
	}
	status, body := s.Do("GET", "/v1/events?type=intent.created", "storefront", nil)
	if status != 200 || !strings.Contains(string(body), in.PaymentPageURL) {
		t.Fatalf("intent.created event without the page URL: %s", body)
	}
	if resp, _ := s.get(t, path); resp.StatusCode != 200 {
		t.Fatalf("page: %d", resp.StatusCode)
	}

	before := s.Counts()
	for _, bad := range []string{"https://evil.example.com/", "javascript:alert(1)", "/relative", "https://shop.example.com/a b", strings.Repeat("x", 3000)} {
		status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-BAD",
			"amount_usd": "10.00", "method": "BTC", "return_url": bad})
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(body, &e)
		if status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "return_url") {
			t.Errorf("return_url %q: %d %s", bad, status, body)
		}
	}
	if after := s.Counts(); !equalCounts(before, after) {
		t.Fatalf("refused creations changed %v -> %v", before, after)
	}
	// Idempotency: the key's stored answer carries both fields.
	_, a := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-IDEM",
		"amount_usd": "10.00", "method": "BTC", "return_url": "https://a.shop.example.org/x"}, "Idempotency-Key", "k1")
	_, b := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-IDEM",
		"amount_usd": "10.00", "method": "BTC", "return_url": "https://a.shop.example.org/x"}, "Idempotency-Key", "k1")
	if string(a) != string(b) || !strings.Contains(string(a), `"payment_page_url"`) || !strings.Contains(string(a), `"return_url":"https://a.shop.example.org/x"`) {
		t.Fatalf("replay:\n%s\n%s", a, b)
	}

	// A renewal keeps the return URL; the old page links to the new one.
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Sync(payment.Bitcoin) // the scanner reports, so the network takes new intents
	status, body = s.Do("POST", "/v1/intents/"+in.ID+"/renew", "storefront", nil)
	if status != 201 {
		t.Fatalf("renew: %d %s", status, body)
	}
	var renewed views.Intent
	if err := json.Unmarshal(body, &renewed); err != nil {
		t.Fatal(err)
	}
	if renewed.ReturnURL != in.ReturnURL || renewed.PaymentPageURL == in.PaymentPageURL || renewed.PaymentPageURL == "" {
		t.Fatalf("renewed: %q %q", renewed.ReturnURL, renewed.PaymentPageURL)
	}
	_, page := s.get(t, path)
	if !strings.Contains(page, `href="`+strings.TrimPrefix(renewed.PaymentPageURL, s.URL)+`"`) || !strings.Contains(page, "This payment request was replaced") {
		t.Fatalf("the old page does not link to the new one:\n%s", page)
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// With the page off, intents have no payment_page_url, and a return_url
// is refused with the reason.
func TestAPIWithoutThePage(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	v := e.CreateIntent("order", "ORD-OFF", "", "10.00", "BTC")
	if v.PaymentPageURL != "" {
		t.Fatalf("payment_page_url %q with the page off", v.PaymentPageURL)
	}
	status, body := e.Do("GET", "/v1/intents/"+v.ID, "storefront", nil)
	if status != 200 || strings.Contains(string(body), "payment_page_url") || strings.Contains(string(body), "return_url") {
		t.Fatalf("read: %s", body)
	}
	status, body = e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-OFF-2",
		"amount_usd": "10.00", "method": "BTC", "return_url": "https://shop.example.com/"})
	if status != 400 || !strings.Contains(string(body), "checkout.enabled") {
		t.Fatalf("return_url with the page off: %d %s", status, body)
	}
}

// "I have paid" goes through the API's rule: recorded once (one
// intent.reported event, the first time kept), answered by the page
// itself, offered only while the intent waits.
func TestReportThroughThePage(t *testing.T) {
	s := newSite(t, siteOptions{})
	in := s.create(t, "ORD-REPORT", "10.00", nil)
	path := s.pageOf(t, in)
	_, page := s.get(t, path)
	if !strings.Contains(page, `action="`+path+`/report"`) || !strings.Contains(page, "I have paid") {
		t.Fatalf("no report form:\n%s", page)
	}
	client := noRedirects()
	for i := 0; i < 2; i++ {
		resp, err := client.Post(s.URL+path+"/report", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 303 || resp.Header.Get("Location") != path+"#status" {
			t.Fatalf("report %d: %d %q", i, resp.StatusCode, resp.Header.Get("Location"))
		}
		s.Clock.Advance(time.Minute)
	}
	v := s.Intent(in.ID)
	if v.ReportedAt == nil || !v.ReportedAt.Equal(time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)) || v.Status != payment.IntentAwaiting {
		t.Fatalf("after two reports: reported_at %v, status %s", v.ReportedAt, v.Status)
	}
	_, body := s.Do("GET", "/v1/events?type=intent.reported", "storefront", nil)
	if n := strings.Count(string(body), `"type":"intent.reported"`); n != 1 {
		t.Fatalf("%d intent.reported events, want 1", n)
	}
	_, page = s.get(t, path)
	if !strings.Contains(page, "You told the shop you paid (14:00 UTC, 30 November 2026)") || strings.Contains(page, `id="report"`) {
		t.Fatalf("after the report:\n%s", page)
	}
	// Paid: no report, no reported note.
	s.Pay(in, payment.Native, paywatchtest.Units(in.AmountBaseUnits), "pay")
	s.Chains[payment.Bitcoin].Mine(1)
	s.Sync(payment.Bitcoin)
	_, page = s.get(t, path)
	if !strings.Contains(page, "Paid. Thank you!") || strings.Contains(page, "report") || strings.Contains(page, "You told the shop") {
		t.Fatalf("paid page:\n%s", page)
	}
}
