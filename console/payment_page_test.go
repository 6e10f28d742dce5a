package console_test

import (
	"strings"
	"testing"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/paywatchtest"
)

// The intent page links the customer's hosted payment page (the API's
// payment_page_url) and shows the return URL; without the page, neither.
func TestIntentPageLinksThePaymentPage(t *testing.T) {
	ck := config.Default().Checkout
	ck.Enabled, ck.PublicBaseURL, ck.ReturnHosts = true, "https://pay.example.com", []string{"shop.example.com"}
	links, err := checkout.NewLinks([]byte("console test secret of 32 characters or more"), ck)
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, paywatchtest.WithPages(links), paywatchtest.WithConfig(func(c *config.Config) { c.Checkout = ck }))
	status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-CONSOLE-PAGE",
		"amount_usd": "10.00", "method": "BTC", "return_url": "https://shop.example.com/back"})
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	v := s.Intent(strings.Split(strings.Split(string(body), `"id":"`)[1], `"`)[0])
	if !strings.HasPrefix(v.PaymentPageURL, "https://pay.example.com/pay/") {
		t.Fatalf("payment_page_url %q", v.PaymentPageURL)
	}
	c := s.client(t)
	c.signIn(t, s.Keys["storefront"])
	_, page := c.get(t, "/console/intents/"+v.ID)
	if !strings.Contains(page, `id="payment-page" href="`+v.PaymentPageURL+`"`) || !strings.Contains(page, `rel="noopener noreferrer"`) ||
		!strings.Contains(page, `id="return-url">https://shop.example.com/back<`) {
		t.Fatalf("the intent page lacks the payment page link or the return URL:\n%s", page)
	}

	plain := newSite(t)
	w := plain.CreateIntent("order", "ORD-CONSOLE-NOPAGE", "", "10.00", "BTC")
	pc := plain.client(t)
	pc.signIn(t, plain.Keys["storefront"])
	if _, page := pc.get(t, "/console/intents/"+w.ID); strings.Contains(page, "payment-page") || strings.Contains(page, "Return URL") {
		t.Fatal("a payment page row without the page")
	}
}
