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
	if !strings.Contains(page, `action="`+path+`/report?lang=en"`) || !strings.Contains(page, "I have paid") {
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
	if !strings.Contains(page, "You told the shop you paid (30 November 2026, 14:00 UTC)") || strings.Contains(page, `id="report"`) {
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

// The storefront's locale chooses the page's language (over the
// browser's), the customer's switch (?lang=) chooses over both, and the
// live updates speak the page's language; a locale that is not one of the
// page's languages is refused naming the field, and nothing is created; a
// renewal keeps it (issue 35 item 1).
func TestLocaleChoosesThePageLanguage(t *testing.T) {
	s := newSite(t, siteOptions{})
	in := s.create(t, "ORD-ID", "1250.00", map[string]string{"locale": "id"})
	if in.Locale != "id" || s.Intent(in.ID).Locale != "id" {
		t.Fatalf("locale %q, read %q", in.Locale, s.Intent(in.ID).Locale)
	}
	path := s.pageOf(t, in)
	resp, page := s.get(t, path, "Accept-Language", "de-DE,de;q=0.9")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Language") != "id" || !strings.Contains(page, `<html lang="id">`) {
		t.Fatalf("locale id under a German browser: %d %q", resp.StatusCode, resp.Header.Get("Content-Language"))
	}
	for _, want := range []string{"Menunggu pembayaran Anda", "Saya sudah bayar", "1.250,00 USD", "Pesanan ORD-ID", "Bayar sebelum",
		"pukul", `<a href="` + path + `?lang=fr" hreflang="fr" lang="fr">Français</a>`, `aria-current="true">Bahasa Indonesia</a>`,
		`action="` + path + `/report?lang=id"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the Indonesian page lacks %q", want)
		}
	}
	// The switch, without JavaScript: a link.
	resp, page = s.get(t, path+"?lang=fr", "Accept-Language", "de")
	if resp.Header.Get("Content-Language") != "fr" || !strings.Contains(page, "En attente de votre paiement") ||
		!strings.Contains(page, "J’ai payé") || !strings.Contains(page, "1\u202f250,00 USD") || !strings.Contains(page, "/live?lang=fr") {
		t.Fatalf("?lang=fr: %q", resp.Header.Get("Content-Language"))
	}
	if _, page = s.get(t, path+"?lang=xx", "Accept-Language", "fr"); !strings.Contains(page, `<html lang="id">`) {
		t.Fatal("an unknown ?lang= did not fall back to the locale")
	}
	// Live updates in the page's language.
	st := s.openStream(t, path+"/live?lang=fr")
	if m := st.next(t, 30*time.Second); !strings.Contains(m.HTML, "En attente de votre paiement") {
		t.Fatalf("French live message %q", m.HTML)
	}
	s.Pay(in, payment.Native, half(in), "locale-half")
	s.Sync(payment.Bitcoin)
	if m := st.until(t, "underpaid", 30*time.Second); !strings.Contains(m.HTML, "Paiement partiel reçu") || !strings.Contains(m.Pay, "Reste à envoyer") {
		t.Fatalf("French underpaid %q", m.HTML)
	}
	// Without a locale the browser decides.
	plain := s.create(t, "ORD-PLAIN", "10.00", nil)
	if plain.Locale != "" {
		t.Fatalf("locale %q without one", plain.Locale)
	}
	for accept, want := range map[string]string{"fr-FR,fr;q=0.9": "fr", "id-ID": "id", "de": "de", "ja": "en"} {
		if resp, _ := s.get(t, s.pageOf(t, plain), "Accept-Language", accept); resp.Header.Get("Content-Language") != want {
			t.Errorf("Accept-Language %s: %q, want %s", accept, resp.Header.Get("Content-Language"), want)
		}
	}

	before := s.Counts()
	for _, bad := range []string{"es", "FR", "fr-FR", "english", "id ", "x"} {
		status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-BADLOC",
			"amount_usd": "10.00", "method": "BTC", "locale": bad})
		var e struct {
			Error struct{ Code, Message, Field string }
		}
		_ = json.Unmarshal(body, &e)
		if status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "locale") {
			t.Errorf("locale %q: %d %s", bad, status, body)
		}
	}
	if after := s.Counts(); !equalCounts(before, after) {
		t.Fatalf("refused creations changed %v -> %v", before, after)
	}

	// A renewal keeps the locale.
	exp := s.create(t, "ORD-FR", "10.00", map[string]string{"locale": "fr"})
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Sync(payment.Bitcoin)
	status, body := s.Do("POST", "/v1/intents/"+exp.ID+"/renew", "storefront", nil)
	var renewed views.Intent
	mustJSON(t, body, &renewed)
	if status != 201 || renewed.Locale != "fr" {
		t.Fatalf("renewed: %d locale %q", status, renewed.Locale)
	}
}

// With the page off a locale is refused with the reason.
func TestLocaleWithoutThePage(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	status, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-OFF-L",
		"amount_usd": "10.00", "method": "BTC", "locale": "fr"})
	if status != 400 || !strings.Contains(string(body), "locale") || !strings.Contains(string(body), "checkout.enabled") {
		t.Fatalf("locale with the page off: %d %s", status, body)
	}
}
