package checkout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// fuzzSite is one site for a fuzz target's every input: a waiting intent
// and a paid one.
type fuzzSite struct {
	*site
	waiting, paid views.Intent
}

func newFuzzSite(f *testing.F) *fuzzSite {
	s := newSite(f, siteOptions{})
	w := s.create(f, "ORD-FUZZ-W", "10.00", nil)
	p := s.create(f, "ORD-FUZZ-P", "10.00", map[string]string{"return_url": "https://shop.example.com/x"})
	s.Pay(p, payment.Native, paywatchtest.Units(p.AmountBaseUnits), "fuzz-paid")
	s.Chains[payment.Bitcoin].Mine(1)
	s.Sync(payment.Bitcoin)
	return &fuzzSite{site: s, waiting: w, paid: p}
}

// do sends a request and returns its status and up to 64 KiB of its body
// within a second (a stream is cut there).
func (fs *fuzzSite) do(t testing.TB, method, rawURL string, headers map[string]string) (int, http.Header, string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		return 0, nil, "", false // not a request a client can send
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			t.Fatalf("%s %s: no answer in 1s", method, rawURL)
		}
		return 0, nil, "", false // refused by the client (an invalid header value)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header, string(b), true
}

// Any token path segment: never a 5xx; a page only for a token Links made
// (canonical); the 404 page is the same for every other; nothing private.
func FuzzPageToken(f *testing.F) {
	fs := newFuzzSite(f)
	good := strings.TrimPrefix(fs.pageOf(f, fs.waiting), "/pay/")
	paid := strings.TrimPrefix(fs.pageOf(f, fs.paid), "/pay/")
	for _, s := range []string{good, paid, good[:42], good + "A", strings.ToUpper(good), "static", "static/pay.js", "..", "%2e%2e",
		good + "/live", good + "/report", paid + "/live", "", "\x00", "ä", strings.Repeat("A", 43), strings.Repeat("_", 43), "/", "//",
		good + "/../" + paid, "pi_01JD3K7W9ZC8X5Q2R4T6V8Y0AB"} {
		f.Add(s, "GET")
		f.Add(s, "POST")
	}
	_, notFound := fs.get(f, "/pay/"+strings.Repeat("Z", 43))
	f.Fuzz(func(t *testing.T, seg, method string) {
		if method != "POST" && method != "HEAD" {
			method = "GET"
		}
		for _, path := range []string{"/pay/" + seg, "/pay/" + url.PathEscape(seg), "/pay/" + seg + "/live", "/pay/" + url.PathEscape(seg) + "/report"} {
			status, h, body, ok := fs.do(t, method, fs.URL+path, nil)
			if !ok {
				continue
			}
			if status >= 500 {
				t.Fatalf("%s %q: %d", method, path, status)
			}
			if strings.Contains(body, "cust-secret-account-77") || strings.Contains(body, fs.waiting.ID) {
				t.Fatalf("%s %q shows a secret", method, path)
			}
			tok, _, _ := strings.Cut(strings.TrimPrefix(path, "/pay/"), "/")
			if id, ok := fs.Links.IntentID(tok); ok {
				if canon, _ := fs.Links.Token(id); canon != tok {
					t.Fatalf("token %q names %s but is not its token %s", tok, id, canon)
				}
			}
			if status == 200 && method != "HEAD" && h.Get("Content-Type") == "text/html; charset=utf-8" &&
				!strings.Contains(body, "ORD-FUZZ-") && !strings.HasPrefix(path, "/pay/static/") {
				t.Fatalf("%s %q: a 200 page that is not an intent's", method, path)
			}
			if status == 404 && method == "GET" && h.Get("Content-Type") == "text/html; charset=utf-8" && body != notFound {
				t.Fatalf("%s %q: a different 404 page", method, path)
			}
		}
	})
}

// Any parameters of the live endpoint (query, lang, Last-Event-ID,
// Accept-Language): never a 5xx; a stream's messages are JSON in a
// catalogue language, the paid page's last, and one the page already has
// (its Last-Event-ID) is not sent again.
func FuzzLiveParams(f *testing.F) {
	fs := newFuzzSite(f)
	live := fs.pageOf(f, fs.paid) + "/live"
	_, h, body, _ := fs.do(f, "GET", fs.URL+live, nil)
	if h.Get("Content-Type") != "text/event-stream" {
		f.Fatalf("live: %v", h)
	}
	paidID := strings.TrimPrefix(strings.Split(body, "\n")[2], "id: ")
	for _, c := range [][4]string{
		{"", "", "", ""}, {"lang=de", "de", "", "de-DE"}, {"lang=xx", "xx", paidID, "ja"}, {"lang=de&lang=en", "en", "", ""},
		{"lang=%00", "\x00", "\xff", "*;q=0"}, {"x=" + strings.Repeat("a", 3000), "EN", "0", strings.Repeat("de,", 200)},
		{"seen=1&lang=", "", paidID + "x", "en;q=oops"},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	f.Fuzz(func(t *testing.T, query, lang, lastID, accept string) {
		u := fs.URL + live + "?" + query
		if lang != "" {
			u += "&lang=" + url.QueryEscape(lang)
		}
		hd := map[string]string{}
		if lastID != "" {
			hd["Last-Event-ID"] = lastID
		}
		if accept != "" {
			hd["Accept-Language"] = accept
		}
		status, h, body, ok := fs.do(t, "GET", u, hd)
		if !ok {
			return
		}
		if status >= 500 {
			t.Fatalf("%q: %d", u, status)
		}
		if status != 200 {
			return
		}
		if cl := h.Get("Content-Language"); checkout.CheckLocale(cl) != nil {
			t.Fatalf("Content-Language %q", cl)
		}
		sc := bufio.NewScanner(strings.NewReader(body))
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var m struct {
					State string `json:"state"`
					Final bool   `json:"final"`
				}
				if err := json.Unmarshal([]byte(data), &m); err != nil || m.State != "paid" || !m.Final {
					t.Fatalf("message %q: %v", data, err)
				}
				n++
			}
			if id, ok := strings.CutPrefix(line, "id: "); ok && id == lastID {
				t.Fatalf("sent the state the page has (%s) again", id)
			}
			if strings.Contains(line, "cust-secret-account-77") {
				t.Fatal("a secret in the stream")
			}
		}
		if want := map[bool]int{true: 0, false: 1}[lastID == paidID]; n != want {
			t.Fatalf("%d messages with Last-Event-ID %q, want %d:\n%s", n, lastID, want, body)
		}
	})
}
