package console_test

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// site is a real paywatch core (Service, API, scanner over a scripted
// bitcoin chain, PostgreSQL) with the console mounted as the daemon mounts
// it: /console/ to the console, everything else to the API.
type site struct {
	*paywatchtest.Env
	Console *console.Console
	URL     string
}

func newSite(t testing.TB, opts ...paywatchtest.Option) *site {
	t.Helper()
	return newSiteWith(t, console.Options{}, opts...)
}

func newSiteWith(t testing.TB, co console.Options, opts ...paywatchtest.Option) *site {
	t.Helper()
	opts = append([]paywatchtest.Option{paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Console.Explorers = map[string]string{"bitcoin": "https://mempool.example/tx/{txid}"}
	})}, opts...)
	e := paywatchtest.New(t, opts...)
	co.Service, co.Reader, co.Finance, co.Reports, co.Config, co.Clock = e.Service, e.Store, e.Finance, e.Reports, e.Config, e.Clock
	if co.Status == nil {
		co.Status = e.Nets
	}
	if co.Events == nil {
		co.Events = e.API // as serve wires it
	}
	c, err := console.New(co)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", c)
	var api http.Handler = e.API
	if _, bench := t.(*testing.B); !bench {
		// Whatever reaches the API through the site (the browser's
		// requests outside /console/ included) is checked against the
		// OpenAPI document, as e.Server's answers are.
		api = openapitest.Handler(t, api)
	}
	mux.Handle("/", api)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &site{Env: e, Console: c, URL: srv.URL}
}

// cases are the intents behind the scenario's inbox.
type cases struct {
	Late, Under, Dup views.Intent
}

// scenario produces, through the real pipeline, an inbox of four
// unresolved transfers: a late top-up payment, an underpaid order's partial
// payment, a duplicate payment of a paid order and a dust transfer.
func (s *site) scenario(t testing.TB) cases {
	t.Helper()
	btc := payment.Bitcoin
	late := s.CreateIntent("topup", "TOPUP-LATE", "cust-17", "100.00", "BTC")
	under := s.CreateIntent("order", "ORD-UNDER", "cust-u", "100.00", "BTC")
	half := new(big.Int).Div(paywatchtest.Units(under.AmountBaseUnits), big.NewInt(2))
	s.Pay(under, payment.Native, half, "under")
	dup := s.CreateIntent("order", "ORD-DUP", "cust-d", "10.00", "BTC")
	s.Pay(dup, payment.Native, paywatchtest.Units(dup.AmountBaseUnits), "exact")
	s.Chains[btc].Mine(2)
	s.Sync(btc)
	s.Pay(dup, payment.Native, paywatchtest.Units(dup.AmountBaseUnits), "dup")
	s.Pay(dup, payment.Native, big.NewInt(0), "dust")
	s.Sync(btc)
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Pay(late, payment.Native, paywatchtest.Units(late.AmountBaseUnits), "late")
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	if st := s.Intent(under.ID).Status; st != "underpaid" {
		t.Fatalf("under intent is %s, want underpaid", st)
	}
	if st := s.Intent(dup.ID).Status; st != "paid" {
		t.Fatalf("dup intent is %s, want paid", st)
	}
	return cases{Late: late, Under: under, Dup: dup}
}

// apiInbox lists the API's inbox.
func (s *site) apiInbox(t testing.TB, query string) finance.InboxPage {
	t.Helper()
	status, body := s.Do("GET", "/v1/transfers?"+query, "finance", nil)
	if status != 200 {
		t.Fatalf("inbox: %d %s", status, body)
	}
	var p finance.InboxPage
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// byClass returns the single unresolved transfer of a classification.
func (s *site) byClass(t testing.TB, class string) views.Transfer {
	t.Helper()
	p := s.apiInbox(t, "classification="+class)
	if len(p.Transfers) != 1 {
		t.Fatalf("%d %s transfers, want 1", len(p.Transfers), class)
	}
	return p.Transfers[0]
}

// client is a cookie-keeping HTTP client that does not follow redirects.
type client struct {
	*http.Client
	base string
}

func (s *site) client(t testing.TB) *client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &client{Client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}, base: s.URL}
}

func (c *client) get(t testing.TB, path string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(c.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (c *client) post(t testing.TB, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(c.base+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formCSRF returns the CSRF token of the first form in a page.
func formCSRF(t testing.TB, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf field in the page:\n%s", page)
	}
	return m[1]
}

// signIn signs a client in with key and returns the CSRF token of its
// session (read from the page it lands on).
func (c *client) signIn(t testing.TB, key string) string {
	t.Helper()
	_, page := c.get(t, "/console/signin")
	resp, body := c.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {key}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	_, page = c.get(t, "/console/search")
	return formCSRF(t, page)
}

// sessionCookie returns the Set-Cookie of the console session in resp
// (either name: plain, or __Host- when Secure).
func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if (c.Name == console.SessionCookie || c.Name == console.SecureSessionCookie) && c.Value != "" {
			return c
		}
	}
	return nil
}

// useLink follows a one-time sign-in link as a browser does: it opens the
// link's page (the token stays in the fragment) and confirms, posting the
// token with the page's CSRF value.
func (c *client) useLink(t testing.TB, link string) (*http.Response, string) {
	t.Helper()
	path, token, _ := strings.Cut(link, "#")
	_, page := c.get(t, path)
	return c.post(t, "/console/signin/link", url.Values{"csrf": {formCSRF(t, page)}, "token": {token}})
}

// transfer reads a transfer through the API.
func (s *site) transfer(t testing.TB, id string) views.Transfer {
	t.Helper()
	status, body := s.Do("GET", "/v1/transfers/"+id, "finance", nil)
	if status != 200 {
		t.Fatalf("transfer %s: %d %s", id, status, body)
	}
	var v views.Transfer
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// hasEvent reports whether the API's event feed has an event of typ about
// transfer id.
func (s *site) hasEvent(t testing.TB, typ, transferID string) bool {
	t.Helper()
	status, body := s.Do("GET", "/v1/events?limit=1000&type="+typ, "storefront", nil)
	if status != 200 {
		t.Fatalf("events: %d %s", status, body)
	}
	var p struct {
		Events []struct {
			Type string
			Data struct {
				ID string `json:"id"`
			}
		}
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Events {
		if e.Type == typ && e.Data.ID == transferID {
			return true
		}
	}
	return false
}
