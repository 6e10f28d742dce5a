package checkout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// testSecret is the page secret of every test site.
const testSecret = "a test secret of at least thirty-two characters"

// nodeURL is the bitcoin node URL of every test site: it must never reach a
// page.
const nodeURL = "http://rpcuser:rpcsecret@node-7.internal.example:18443/wallet/w"

// site is a real paywatch core (Service, API, scanner over a scripted
// bitcoin chain, PostgreSQL) with the payment pages mounted as the daemon
// mounts them: /pay/ to the pages, everything else to the API.
type site struct {
	*paywatchtest.Env
	Page  *checkout.Page
	Links *checkout.Links
	URL   string
}

// siteOptions adjust a site before it starts.
type siteOptions struct {
	checkout func(*config.Checkout)
	wrap     func(checkout.Intents) checkout.Intents
	feed     func(checkout.Feed) checkout.Feed
	wake     func(checkout.Waker) checkout.Waker
	server   func(*http.Server)
	env      []paywatchtest.Option
}

func newSite(t testing.TB, so siteOptions) *site {
	t.Helper()
	var handler http.Handler
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	if so.server != nil {
		so.server(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	ck := config.Default().Checkout
	ck.Enabled, ck.PublicBaseURL, ck.StorefrontName = true, srv.URL, "Example Shop"
	ck.ReturnHosts = []string{"shop.example.com", "*.shop.example.org"}
	ck.ProgressInterval = config.Duration{Duration: 100 * time.Millisecond}
	ck.RequestsPerMinute = 100000
	if so.checkout != nil {
		so.checkout(&ck)
	}
	links, err := checkout.NewLinks([]byte(testSecret), ck)
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]paywatchtest.Option{paywatchtest.Only(payment.Bitcoin), paywatchtest.WithPages(links),
		paywatchtest.WithConfig(func(c *config.Config) {
			c.Checkout = ck
			c.Networks["bitcoin"].RPCURL = nodeURL
		})}, so.env...)
	e := paywatchtest.New(t, opts...)
	var in checkout.Intents = e.Service
	if so.wrap != nil {
		in = so.wrap(in)
	}
	var feed checkout.Feed = e.Store
	if so.feed != nil {
		feed = so.feed(feed)
	}
	var wake checkout.Waker = checkout.NotifierWaker{N: e.Store.Notifier()}
	if so.wake != nil {
		wake = so.wake(wake)
	}
	p, err := checkout.New(checkout.Options{Intents: in, Feed: feed, Wake: wake, Links: links, Payables: e.Service,
		Config: e.Config, Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("page hub: %v", err)
		}
	})
	mux := http.NewServeMux()
	mux.Handle("/pay/", p)
	var api http.Handler = e.API
	if _, bench := t.(*testing.B); !bench {
		api = openapitest.Handler(t, api)
	}
	mux.Handle("/", api)
	mu.Lock()
	handler = mux
	mu.Unlock()
	return &site{Env: e, Page: p, Links: links, URL: srv.URL}
}

// create creates an order through the API, with body's extra fields.
func (s *site) create(t testing.TB, ref, usd string, extra map[string]string) views.Intent {
	t.Helper()
	body := map[string]string{"kind": "order", "reference": ref, "amount_usd": usd, "method": "BTC", "account": "cust-secret-account-77"}
	for k, v := range extra {
		body[k] = v
	}
	status, raw := s.Do("POST", "/v1/intents", "storefront", body)
	if status != 201 {
		t.Fatalf("create %s: %d %s", ref, status, raw)
	}
	var v views.Intent
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// pageOf returns the path of an intent's page.
func (s *site) pageOf(t testing.TB, v views.Intent) string {
	t.Helper()
	p := s.Links.Path(v.ID)
	if p == "" || v.PaymentPageURL != s.URL+p {
		t.Fatalf("payment_page_url %q, want %q", v.PaymentPageURL, s.URL+p)
	}
	return p
}

// get fetches a path of the site.
func (s *site) get(t testing.TB, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// broadcast puts a payment of amount to an intent's address in its chain's
// mempool (not mined).
func (s *site) broadcast(t testing.TB, v views.Intent, asset payment.Asset, amount *big.Int, label string) {
	t.Helper()
	n := payment.Network(v.Network)
	a, err := addresses.ParseAddress(n, s.Config.Networks[n].Chain, v.Address)
	if err != nil {
		t.Fatal(err)
	}
	s.Chains[n].Broadcast(chains.Transfer{TxID: chainstest.TxID(label), Asset: asset, Key: a.Key, Address: v.Address, Amount: amount})
}

// half is half an intent's amount, in base units.
func half(v views.Intent) *big.Int {
	return new(big.Int).Div(paywatchtest.Units(v.AmountBaseUnits), big.NewInt(2))
}

// rest is an intent's amount minus part.
func rest(v views.Intent, part *big.Int) *big.Int {
	return new(big.Int).Sub(paywatchtest.Units(v.AmountBaseUnits), part)
}

// liveMsg is one message of a page's live endpoint.
type liveMsg struct {
	ID    string
	State string `json:"state"`
	Title string `json:"title"`
	HTML  string `json:"html"`
	Pay   string `json:"pay"`
	Open  bool   `json:"open"`
	Final bool   `json:"final"`
	Now   string `json:"now"`
}

// stream is an open live connection.
type stream struct {
	resp *http.Response
	rd   *bufio.Reader
	msgs chan liveMsg
	errs chan error
}

// openStream connects to a page's live endpoint and reads its messages in
// the background.
func (s *site) openStream(t testing.TB, path string, headers ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("live %s: %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	st := &stream{resp: resp, rd: bufio.NewReader(resp.Body), msgs: make(chan liveMsg, 64), errs: make(chan error, 1)}
	go st.read()
	t.Cleanup(func() { resp.Body.Close() })
	return st
}

func (st *stream) read() {
	var id, data string
	for {
		line, err := st.rd.ReadString('\n')
		if err != nil {
			st.errs <- err
			close(st.msgs)
			return
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if data != "" {
				var m liveMsg
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					st.errs <- err
					close(st.msgs)
					return
				}
				m.ID = id
				st.msgs <- m
			}
			id, data = "", ""
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// next returns the next message, failing after wait.
func (st *stream) next(t testing.TB, wait time.Duration) liveMsg {
	t.Helper()
	select {
	case m, ok := <-st.msgs:
		if !ok {
			t.Fatalf("the stream ended: %v", <-st.errs)
		}
		return m
	case <-time.After(wait):
		t.Fatalf("no live message within %s", wait)
	}
	return liveMsg{}
}

// until returns the first message in state, failing after wait.
func (st *stream) until(t testing.TB, state string, wait time.Duration) liveMsg {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		m := st.next(t, time.Until(deadline))
		if m.State == state {
			return m
		}
	}
}

// noRedirects is an HTTP client that does not follow redirects.
func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// untilHTML returns the first message whose status contains text.
func (st *stream) untilHTML(t testing.TB, text string, wait time.Duration) liveMsg {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if m := st.next(t, time.Until(deadline)); strings.Contains(m.HTML, text) {
			return m
		}
	}
}
