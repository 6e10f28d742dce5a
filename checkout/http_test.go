package checkout_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// A page's live stream follows its intent through the real pipeline
// (scripted bitcoin chain, scanner, decisions on PostgreSQL): waiting; half
// paid (underpaid, with the exact rest, same address); the rest in the
// mempool (0 of 2 confirmations); mined (1 of 2: no event, the progress
// check); confirmed (paid, the last message, the stream ends).
func TestLivePageFollowsPayments(t *testing.T) {
	s := newSite(t, siteOptions{})
	btc := payment.Bitcoin
	in := s.create(t, "ORD-LIVE-1", "100.00", nil)
	path := s.pageOf(t, in)
	resp, body := s.get(t, path)
	amount := payment.TrimUnits(paywatchtest.Units(in.AmountBaseUnits), 8)
	if resp.StatusCode != 200 || !strings.Contains(body, `<code id="amount" data-value="`+amount+`" aria-describedby="amount-label">`+amount+`</code>`) ||
		!strings.Contains(body, `data-value="`+in.Address+`"`) {
		t.Fatalf("page: %d\n%s", resp.StatusCode, body)
	}
	st := s.openStream(t, path+"/live?lang=en")
	m := st.next(t, 10*time.Second)
	if m.State != "waiting" || !m.Open || m.Final {
		t.Fatalf("first message %+v", m)
	}
	// The stream's first state is the one the page shows (same id), so the
	// page does not redraw it.
	if !strings.Contains(body, `data-id="`+m.ID+`"`) || len(m.ID) != 16 {
		t.Fatalf("first message id %q is not the page's status id", m.ID)
	}
	// A page that has that state (Last-Event-ID on reconnection) is sent
	// nothing until it changes.
	again := s.openStream(t, path+"/live?lang=en", "Last-Event-ID", m.ID)

	part := half(in)
	s.Pay(in, payment.Native, part, "half")
	s.Sync(btc)
	if first := again.next(t, 10*time.Second); first.State != "underpaid" {
		t.Fatalf("the reconnected stream's first message: %+v", first)
	}
	m = st.until(t, "underpaid", 10*time.Second)
	missing := payment.TrimUnits(rest(in, part), 8)
	if !strings.Contains(m.HTML, missing+" BTC is still missing") || !strings.Contains(m.HTML, "to the same address") || !m.Open {
		t.Fatalf("underpaid says %q, want the missing %s BTC", m.HTML, missing)
	}
	// The instructions ask for the rest, with a QR code and wallet link of
	// the rest.
	if !strings.Contains(m.Pay, `aria-describedby="amount-label">`+missing+`</code>`) || !strings.Contains(m.Pay, "Send the rest, exactly") ||
		!strings.Contains(m.Pay, `href="bitcoin:`+in.Address+`?amount=`+missing+`"`) {
		t.Fatalf("underpaid instructions:\n%s", m.Pay)
	}

	s.broadcast(t, in, payment.Native, rest(in, part), "rest")
	s.Sync(btc)
	m = st.until(t, "confirming", 10*time.Second)
	if !strings.Contains(m.HTML, "0 of 2 confirmations") || m.Open {
		t.Fatalf("in the mempool: %q", m.HTML)
	}
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	// The rest is in a block: 1 of 2 (the first half has 2). No event says
	// so: the page learns it from the progress check.
	if m = st.untilHTML(t, "1 of 2 confirmations", 10*time.Second); m.State != "confirming" {
		t.Fatalf("after the first block: %+v", m)
	}
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	m = st.until(t, "paid", 10*time.Second)
	if !m.Final || m.Open || !strings.Contains(m.HTML, "Paid. Thank you!") {
		t.Fatalf("paid: %+v", m)
	}
	select {
	case _, ok := <-st.msgs:
		if ok {
			t.Fatal("a message after the final one")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end after paid")
	}
}

// The page's security headers: a strict CSP with no inline script, no
// framing, no referrer, no caching, no cookie; static files are cached.
func TestPageHeaders(t *testing.T) {
	s := newSite(t, siteOptions{})
	in := s.create(t, "ORD-HDR", "10.00", nil)
	path := s.pageOf(t, in)
	resp, body := s.get(t, path)
	h := resp.Header
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Language":        "en",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if len(resp.Cookies()) > 0 || h.Get("Set-Cookie") != "" {
		t.Error("the page sets a cookie")
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, "<style") || strings.Contains(body, " on") && strings.Contains(body, "onclick") {
		t.Error("inline script or style in the page")
	}
	for _, f := range []string{"pay.js", "pay.css"} {
		resp, b := s.get(t, "/pay/static/"+f)
		if resp.StatusCode != 200 || len(b) < 500 || resp.Header.Get("Cache-Control") != "public, max-age=86400" {
			t.Errorf("static %s: %d %q", f, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	}
	// Embedding allowed for the configured storefront only.
	framed := newSite(t, siteOptions{checkout: func(c *config.Checkout) {
		c.FrameAncestors = []string{"https://shop.example.com", "https://*.shop.example.org"}
	}})
	fin := framed.create(t, "ORD-FRAME", "10.00", nil)
	resp, _ = framed.get(t, framed.pageOf(t, fin))
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors https://shop.example.com https://*.shop.example.org;") ||
		resp.Header.Get("X-Frame-Options") != "" {
		t.Fatalf("framed: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
	}
}

// Every path under /pay/ that is not a live page (malformed, forged, of
// another secret, of an intent that does not exist, expired, another
// action or method) is the same plain 404 page, byte for byte, and reads
// nothing for a token that fails its tag.
func TestNotFoundRevealsNothing(t *testing.T) {
	var gets atomic.Int64
	s := newSite(t, siteOptions{
		checkout: func(c *config.Checkout) { c.LinkLifetime = config.Duration{Duration: time.Hour} },
		wrap: func(in checkout.Intents) checkout.Intents {
			return countingIntents{Intents: in, gets: &gets}
		}})
	in := s.create(t, "ORD-404", "10.00", nil)
	good := s.pageOf(t, in)
	tok := strings.TrimPrefix(good, "/pay/")
	other := links(t, testSecret+"other")
	otherTok, _ := other.Token(in.ID)
	missingTok, _ := s.Links.Token(store.NewID("pi"))
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	raw[20] ^= 0x10
	forged := base64.RawURLEncoding.EncodeToString(raw)

	_, want := s.get(t, "/pay/"+strings.Repeat("A", 43))
	if !strings.Contains(want, "Page not found") {
		t.Fatalf("404 page: %s", want)
	}
	before := gets.Load()
	for _, p := range []string{"/pay/", "/pay/x", "/pay/" + forged, "/pay/" + otherTok, "/pay/" + tok + "x",
		"/pay/" + forged + "/live", "/pay/" + tok + "/", "/pay/" + tok + "/live/x", "/pay/" + tok + "/qr.png",
		"/pay/static/", "/pay/static/nope.js", "/pay/" + tok[:42], "/pay/%00", "/pay/" + tok + "/report"} {
		resp, body := s.get(t, p)
		if resp.StatusCode != 404 || body != want {
			t.Errorf("GET %s: %d\n%s", p, resp.StatusCode, body)
		}
		if len(resp.Cookies()) > 0 {
			t.Errorf("GET %s sets a cookie", p)
		}
	}
	if n := gets.Load() - before; n != 0 {
		t.Errorf("tokens that fail their tag read %d intents", n)
	}
	for _, p := range []string{"/pay/" + missingTok, "/pay/" + missingTok + "/live"} {
		if resp, body := s.get(t, p); resp.StatusCode != 404 || body != want {
			t.Errorf("GET %s (no such intent): %d", p, resp.StatusCode)
		}
	}
	resp, err := http.Post(s.URL+good, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("POST to the page: %d", resp.StatusCode)
	}
	// The same page in German for a German browser.
	resp, de := s.get(t, "/pay/"+forged, "Accept-Language", "de-DE")
	if resp.StatusCode != 404 || !strings.Contains(de, "Seite nicht gefunden") {
		t.Errorf("German 404: %d %s", resp.StatusCode, de)
	}
	// Expired: the link lifetime after the deadline.
	if resp, _ := s.get(t, good); resp.StatusCode != 200 {
		t.Fatalf("the page before its link expired: %d", resp.StatusCode)
	}
	s.Clock.Advance(30*time.Minute + time.Hour + time.Second)
	for _, p := range []string{good, good + "/live"} {
		if resp, body := s.get(t, p); resp.StatusCode != 404 || body != want {
			t.Errorf("expired link %s: %d", p, resp.StatusCode)
		}
	}
}

// countingIntents counts the intents read.
type countingIntents struct {
	checkout.Intents
	gets *atomic.Int64
}

func (c countingIntents) Get(ctx context.Context, id string) (views.Intent, error) {
	c.gets.Add(1)
	return c.Intents.Get(ctx, id)
}

// Each client address has its own budget of requests; beyond it, 429 with
// Retry-After. Behind a trusted proxy the client is the forwarded
// address; a forwarded address from anyone else is ignored.
func TestRateLimitPerClient(t *testing.T) {
	s := newSite(t, siteOptions{checkout: func(c *config.Checkout) {
		c.RequestsPerMinute = 30 // a burst of 10
		c.TrustedProxies = []string{"127.0.0.0/8"}
	}})
	in := s.create(t, "ORD-RATE", "10.00", nil)
	path := s.pageOf(t, in)
	for i := 0; i < 10; i++ {
		if resp, _ := s.get(t, path, "X-Forwarded-For", "203.0.113.7"); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	resp, body := s.get(t, path, "X-Forwarded-For", "203.0.113.7")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Too many requests") {
		t.Fatalf("11th request: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Guessing tokens spends the same budget.
	if resp, _ := s.get(t, "/pay/"+strings.Repeat("B", 43), "X-Forwarded-For", "203.0.113.7"); resp.StatusCode != 429 {
		t.Fatalf("a guess past the budget: %d", resp.StatusCode)
	}
	if resp, _ := s.get(t, path, "X-Forwarded-For", "198.51.100.1, 203.0.113.8"); resp.StatusCode != 200 {
		t.Fatalf("another client: %d", resp.StatusCode)
	}
	// An IPv6 client is its /64.
	for i := 0; i < 10; i++ {
		s.get(t, path, "X-Forwarded-For", fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	if resp, _ := s.get(t, path, "X-Forwarded-For", "2001:db8:1:2:ffff::1"); resp.StatusCode != 429 {
		t.Fatalf("the same /64: %d", resp.StatusCode)
	}

	direct := newSite(t, siteOptions{checkout: func(c *config.Checkout) { c.RequestsPerMinute = 30 }})
	din := direct.create(t, "ORD-RATE-2", "10.00", nil)
	dpath := direct.pageOf(t, din)
	for i := 0; i < 10; i++ {
		direct.get(t, dpath, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
	}
	if resp, _ := direct.get(t, dpath, "X-Forwarded-For", "198.51.100.99"); resp.StatusCode != 429 {
		t.Fatalf("X-Forwarded-For from an untrusted peer changed the client: %d", resp.StatusCode)
	}
}

// Open live connections are bounded per client and in all; a refused one
// gets 503 with Retry-After, and a closed one frees its place.
func TestLiveConnectionCaps(t *testing.T) {
	s := newSite(t, siteOptions{checkout: func(c *config.Checkout) { c.MaxLive, c.MaxLivePerClient = 3, 2 }})
	in := s.create(t, "ORD-CAP", "10.00", nil)
	live := s.pageOf(t, in) + "/live"
	a := s.openStream(t, live)
	a.next(t, 10*time.Second)
	b := s.openStream(t, live)
	b.next(t, 10*time.Second)
	resp, _ := s.get(t, live)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream of one client: %d", resp.StatusCode)
	}
	if got := s.Page.Live(); got != 2 {
		t.Fatalf("open connections %d, want 2", got)
	}
	a.resp.Body.Close()
	waitUntil(t, func() bool { return s.Page.Live() == 1 })
	c := s.openStream(t, live)
	c.next(t, 10*time.Second)
}

// waitUntil waits for a condition, checking every few milliseconds.
func waitUntil(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
