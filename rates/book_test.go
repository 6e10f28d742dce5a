package rates

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted is a Provider whose answers the test sets per symbol.
type scripted struct {
	name  string
	mu    sync.Mutex
	price map[string]Price
	err   map[string]error
	block bool // wait for ctx to end, then fail with its error
	calls chan string
}

func newScripted(name string) *scripted {
	return &scripted{name: name, price: map[string]Price{}, err: map[string]error{}}
}

func (s *scripted) Name() string { return s.name }

func (s *scripted) set(sym, usd string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.price[sym] = Price{Source: s.name, USDPerUnit: rat(usd), At: at}
	delete(s.err, sym)
}

func (s *scripted) fail(sym string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err[sym] = err
}

func (s *scripted) Price(ctx context.Context, sym string) (Price, error) {
	if s.calls != nil {
		select {
		case s.calls <- sym:
		default:
		}
	}
	if s.block {
		<-ctx.Done()
		return Price{}, fmt.Errorf("%s %s: %w", s.name, sym, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err, ok := s.err[sym]; ok {
		return Price{}, err
	}
	p, ok := s.price[sym]
	if !ok {
		return Price{}, fmt.Errorf("%w: %s", ErrUnsupportedSymbol, sym)
	}
	p.USDPerUnit = new(big.Rat).Set(p.USDPerUnit)
	return p, nil
}

var t0 = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

func book(cfg BookConfig, ps ...*scripted) *Book {
	providers := make([]Provider, len(ps))
	for i, p := range ps {
		providers[i] = p
	}
	return NewBook(cfg, providers, []string{"BTC", "USDT"}, slog.New(slog.DiscardHandler))
}

func mustQuote(t *testing.T, b *Book, sym string, now time.Time) Quote {
	t.Helper()
	q, err := b.Quote(sym, now)
	if err != nil {
		t.Fatalf("Quote(%s): %v", sym, err)
	}
	return q
}

func TestQuoteMedianOfThree(t *testing.T) {
	a, b, c := newScripted("coinbase"), newScripted("kraken"), newScripted("binance")
	a.set("BTC", "97100.00", t0.Add(-10*time.Second))
	b.set("BTC", "97000.12", t0.Add(-30*time.Second))
	c.set("BTC", "96950.5", t0.Add(-20*time.Second))
	bk := book(BookConfig{}, a, b, c)
	bk.Refresh(context.Background())
	q := mustQuote(t, bk, "BTC", t0)
	if q.USDPerUnit.Cmp(rat("97000.12")) != 0 || q.Decimal() != "97000.12" {
		t.Fatalf("median %s (%s), want 97000.12", q.USDPerUnit.RatString(), q.Decimal())
	}
	if !slices.Equal(q.Sources, []string{"coinbase", "kraken", "binance"}) {
		t.Errorf("sources %v", q.Sources)
	}
	if !q.At.Equal(t0.Add(-30 * time.Second)) {
		t.Errorf("At %v, want the oldest price's time %v", q.At, t0.Add(-30*time.Second))
	}
	if q.Symbol != "BTC" {
		t.Errorf("symbol %q", q.Symbol)
	}
	// The quote owns its rate: changing it changes nothing in the book.
	q.USDPerUnit.SetInt64(1)
	if again := mustQuote(t, bk, "BTC", t0); again.USDPerUnit.Cmp(rat("97000.12")) != 0 {
		t.Fatalf("book changed through a quote: %s", again.USDPerUnit.RatString())
	}
}

func TestQuoteMedianOfTwoIsTheMean(t *testing.T) {
	a, b := newScripted("coinbase"), newScripted("kraken")
	a.set("BTC", "97000.10", t0)
	b.set("BTC", "97000.13", t0)
	a.set("USDT", "1.0001", t0)
	b.set("USDT", "1.0002", t0)
	bk := book(BookConfig{}, a, b)
	bk.Refresh(context.Background())
	for sym, want := range map[string]string{"BTC": "97000.115", "USDT": "1.00015"} {
		q := mustQuote(t, bk, sym, t0)
		if q.USDPerUnit.Cmp(rat(want)) != 0 || q.Decimal() != want {
			t.Errorf("%s: %s (%s), want exactly %s", sym, q.USDPerUnit.RatString(), q.Decimal(), want)
		}
		if len(q.Sources) != 2 {
			t.Errorf("%s sources %v", sym, q.Sources)
		}
	}
}

func TestQuoteDropsStaleSource(t *testing.T) {
	a, b, c := newScripted("coinbase"), newScripted("kraken"), newScripted("binance")
	a.set("BTC", "97000", t0)
	b.set("BTC", "97010", t0.Add(-5*time.Minute))             // exactly MaxAge old: fresh
	c.set("BTC", "90000", t0.Add(-5*time.Minute-time.Second)) // older: stale
	bk := book(BookConfig{}, a, b, c)
	bk.Refresh(context.Background())
	q := mustQuote(t, bk, "BTC", t0)
	if !slices.Equal(q.Sources, []string{"coinbase", "kraken"}) {
		t.Fatalf("sources %v, want the stale binance dropped", q.Sources)
	}
	if q.USDPerUnit.Cmp(rat("97005")) != 0 {
		t.Fatalf("rate %s, want 97005", q.Decimal())
	}
	// Later, everything is stale.
	_, err := bk.Quote("BTC", t0.Add(9*time.Minute))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	want := "no fresh BTC/USD rate from 3 sources (coinbase: stale 9m; kraken: stale 14m; binance: stale 14m)"
	if err.Error() != want {
		t.Fatalf("message\n %q\nwant\n %q", err, want)
	}
}

func TestQuoteDropsOutlier(t *testing.T) {
	a, b, c := newScripted("coinbase"), newScripted("kraken"), newScripted("binance")
	a.set("BTC", "97000", t0)
	b.set("BTC", "97100", t0)
	c.set("BTC", "100000", t0) // 2.99% above the median 97100
	bk := book(BookConfig{}, a, b, c)
	bk.Refresh(context.Background())
	q := mustQuote(t, bk, "BTC", t0)
	if !slices.Equal(q.Sources, []string{"coinbase", "kraken"}) || q.USDPerUnit.Cmp(rat("97050")) != 0 {
		t.Fatalf("quote %s from %v, want 97050 from coinbase and kraken", q.Decimal(), q.Sources)
	}

	// Exactly at the bound is kept; just past it is not.
	a.set("USDT", "0.98", t0)
	b.set("USDT", "1", t0)
	c.set("USDT", "1.02", t0)
	bk.Refresh(context.Background())
	if q := mustQuote(t, bk, "USDT", t0); len(q.Sources) != 3 || q.Decimal() != "1" {
		t.Fatalf("USDT %s from %v, want 1 from all three", q.Decimal(), q.Sources)
	}
	c.set("USDT", "1.0201", t0)
	bk.Refresh(context.Background())
	if q := mustQuote(t, bk, "USDT", t0); !slices.Equal(q.Sources, []string{"coinbase", "kraken"}) || q.Decimal() != "0.99" {
		t.Fatalf("USDT %s from %v, want 0.99 from coinbase and kraken", q.Decimal(), q.Sources)
	}

	// A tighter configured bound drops more.
	tight := book(BookConfig{MaxDeviation: big.NewRat(1, 1000), MinSources: 1}, a, b, c)
	tight.Refresh(context.Background())
	if q := mustQuote(t, tight, "USDT", t0); !slices.Equal(q.Sources, []string{"kraken"}) {
		t.Fatalf("tight USDT from %v, want kraken only", q.Sources)
	}
}

func TestQuoteTwoFarApartSourcesGiveNoQuote(t *testing.T) {
	a, b := newScripted("coinbase"), newScripted("kraken")
	a.set("BTC", "95000", t0)
	b.set("BTC", "100000", t0)
	bk := book(BookConfig{}, a, b)
	bk.Refresh(context.Background())
	_, err := bk.Quote("BTC", t0)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	for _, s := range []string{"coinbase: outlier 95000 at 2.56% from median 97500", "kraken: outlier 100000 at 2.56% from median 97500"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
}

func TestQuoteAllSourcesFailing(t *testing.T) {
	slow, stale := newScripted("coinbase"), newScripted("kraken")
	slow.block = true
	stale.set("BTC", "97000.10", t0)
	bk := book(BookConfig{CallTimeout: 20 * time.Millisecond}, slow, stale)
	bk.Refresh(context.Background())
	_, err := bk.Quote("BTC", t0.Add(9*time.Minute))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	const want = "no fresh BTC/USD rate from 2 sources (coinbase: timeout; kraken: stale 9m)"
	if err.Error() != want {
		t.Fatalf("message\n %q\nwant\n %q", err, want)
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Symbol != "BTC" || ue.Usable != 0 || len(ue.Rejected) != 2 {
		t.Fatalf("UnavailableError %+v", ue)
	}
}

func TestQuoteReasonsFromRealExchangeErrors(t *testing.T) {
	cb := serve(t, "/v2/prices/BTC-USD/spot", nil, 500, `{"errors":[{"id":"internal_server_error","message":"Internal server error"}]}`)
	kr := serve(t, "/0/public/Ticker", nil, 200, `{"error":["EQuery:Unknown asset pair"]}`)
	bn := serve(t, "/api/v3/ticker/price", nil, 429, `{"code":-1003,"msg":"Too much request weight used."}`)
	cg := serve(t, "/api/v3/simple/price", nil, 200, `{"bitcoin":{"usd":"97000"}}`)
	bk := NewBook(BookConfig{}, []Provider{
		NewCoinbase(cb.srv.URL, nil), NewKraken(kr.srv.URL, nil), NewBinance(bn.srv.URL, nil), NewCoinGecko(cg.srv.URL, nil),
	}, []string{"BTC"}, nil)
	bk.Refresh(context.Background())
	_, err := bk.Quote("BTC", time.Now())
	const want = "no fresh BTC/USD rate from 4 sources (" +
		"coinbase: HTTP 500 internal_server_error: Internal server error; " +
		"kraken: HTTP 200: EQuery:Unknown asset pair; " +
		"binance: rate limited, HTTP 429 -1003: Too much request weight used.; " +
		`coingecko: invalid rate response: usd price for "bitcoin" is string, not a number)`
	if err == nil || err.Error() != want {
		t.Fatalf("message\n %q\nwant\n %q", err, want)
	}
}

func TestQuoteFromRealExchangeFormats(t *testing.T) {
	cb := serve(t, "/v2/prices/BTC-USD/spot", nil, 200, `{"data":{"amount":"97000.12","base":"BTC","currency":"USD"}}`)
	kr := serve(t, "/0/public/Ticker", nil, 200, `{"error":[],"result":{"XXBTZUSD":{"c":["97000.10000","0.001"]}}}`)
	bn := serve(t, "/api/v3/ticker/price", nil, 200, `{"symbol":"BTCUSDT","price":"97020.00000000"}`)
	cg := serve(t, "/api/v3/simple/price", nil, 200, `{"bitcoin":{"usd":96990.5}}`)
	bk := NewBook(BookConfig{MinSources: 3}, []Provider{
		NewCoinbase(cb.srv.URL, nil), NewKraken(kr.srv.URL, nil), NewBinance(bn.srv.URL, nil), NewCoinGecko(cg.srv.URL, nil),
	}, []string{"BTC"}, nil)
	bk.Refresh(context.Background())
	q := mustQuote(t, bk, "BTC", time.Now())
	// Sorted: 96990.5, 97000.10, 97000.12, 97020 -> (97000.10 + 97000.12) / 2.
	if q.Decimal() != "97000.11" || len(q.Sources) != 4 {
		t.Fatalf("quote %s from %v, want 97000.11 from 4 sources", q.Decimal(), q.Sources)
	}
}

func TestQuoteMinSources(t *testing.T) {
	a, b, c := newScripted("coinbase"), newScripted("kraken"), newScripted("binance")
	a.set("BTC", "97000", t0)
	b.fail("BTC", errors.New("connection refused"))
	c.set("BTC", "97000", t0.Add(-time.Hour))
	bk := book(BookConfig{MinSources: 2}, a, b, c)
	bk.Refresh(context.Background())
	_, err := bk.Quote("BTC", t0)
	const want = "only 1 usable BTC/USD rates from 3 sources, need 2 (kraken: connection refused; binance: stale 1h0m)"
	if !errors.Is(err, ErrUnavailable) || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	c.set("BTC", "97002", t0)
	bk.Refresh(context.Background())
	if q := mustQuote(t, bk, "BTC", t0); q.Decimal() != "97001" {
		t.Fatalf("quote %s, want 97001", q.Decimal())
	}
}

func TestQuoteUntrackedSymbol(t *testing.T) {
	a := newScripted("coinbase")
	a.set("BTC", "97000", t0)
	bk := book(BookConfig{}, a)
	bk.Refresh(context.Background())
	if _, err := bk.Quote("DOGE", t0); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "DOGE/USD is not tracked") {
		t.Fatalf("error %v", err)
	}
	if _, err := bk.Quote("USDT", t0); err == nil || err.Error() != "no fresh USDT/USD rate from 1 sources (coinbase: symbol not supported: USDT)" {
		t.Fatalf("error %v", err)
	}
	empty := NewBook(BookConfig{}, nil, []string{"BTC"}, nil)
	if _, err := empty.Quote("BTC", t0); err == nil || err.Error() != "no fresh BTC/USD rate from 0 sources (no sources configured)" {
		t.Fatalf("error %v", err)
	}
}

func TestRefreshKeepsLastGoodPrice(t *testing.T) {
	var fail bool
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"errors":[{"id":"service_unavailable","message":"Service unavailable"}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"amount":"97000.12","base":"BTC","currency":"USD"}}`))
	}))
	t.Cleanup(srv.Close)
	bk := NewBook(BookConfig{MinSources: 1}, []Provider{NewCoinbase(srv.URL, nil)}, []string{"BTC"}, nil)
	bk.Refresh(context.Background())
	first := mustQuote(t, bk, "BTC", time.Now())

	mu.Lock()
	fail = true
	mu.Unlock()
	bk.Refresh(context.Background())
	q := mustQuote(t, bk, "BTC", time.Now())
	if q.Decimal() != "97000.12" || !q.At.Equal(first.At) {
		t.Fatalf("after a failed refresh: %s at %v, want the last good 97000.12 at %v", q.Decimal(), q.At, first.At)
	}
	// Once that price ages out, the failure is the reason given.
	_, err := bk.Quote("BTC", first.At.Add(6*time.Minute))
	const want = "no fresh BTC/USD rate from 1 sources (coinbase: HTTP 503 service_unavailable: Service unavailable, last price 6m old)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	// A later success clears the error.
	mu.Lock()
	fail = false
	mu.Unlock()
	bk.Refresh(context.Background())
	if q := mustQuote(t, bk, "BTC", time.Now()); !q.At.After(first.At) {
		t.Fatalf("price not refreshed: At %v", q.At)
	}
}

func TestRefreshIgnoresOwnCancellation(t *testing.T) {
	a := newScripted("coinbase")
	a.set("BTC", "97000", t0)
	bk := book(BookConfig{MinSources: 1}, a)
	bk.Refresh(context.Background())
	a.block = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bk.Refresh(ctx)
	if q := mustQuote(t, bk, "BTC", t0); q.Decimal() != "97000" {
		t.Fatalf("quote %s", q.Decimal())
	}
	bk.mu.RLock()
	defer bk.mu.RUnlock()
	if err := bk.slots["BTC"][0].lastErr; err != nil {
		t.Fatalf("shutdown recorded as a provider failure: %v", err)
	}
}

func TestRefreshFetchesEveryPairConcurrently(t *testing.T) {
	// Each call waits until all calls have started: a serial Refresh would
	// wait forever (bounded here by CallTimeout, which then fails the test).
	const providers, symbols = 4, 2
	var started sync.WaitGroup
	started.Add(providers * symbols)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	var ps []Provider
	for i := range providers {
		ps = append(ps, providerFunc{fmt.Sprintf("p%d", i), func(ctx context.Context, sym string) (Price, error) {
			started.Done()
			select {
			case <-all:
				return Price{USDPerUnit: big.NewRat(97000, 1)}, nil
			case <-ctx.Done():
				return Price{}, ctx.Err()
			}
		}})
	}
	bk := NewBook(BookConfig{CallTimeout: 5 * time.Second}, ps, []string{"BTC", "ETH"}, nil)
	bk.Refresh(context.Background())
	for _, sym := range []string{"BTC", "ETH"} {
		q := mustQuote(t, bk, sym, time.Now())
		if len(q.Sources) != providers {
			t.Fatalf("%s from %v", sym, q.Sources)
		}
	}
}

// providerFunc adapts a function to Provider.
type providerFunc struct {
	name string
	f    func(ctx context.Context, sym string) (Price, error)
}

func (p providerFunc) Name() string                                         { return p.name }
func (p providerFunc) Price(ctx context.Context, sym string) (Price, error) { return p.f(ctx, sym) }

func TestRefreshRejectsContractBreakingProvider(t *testing.T) {
	bad := providerFunc{"bad", func(context.Context, string) (Price, error) { return Price{USDPerUnit: big.NewRat(-1, 1)}, nil }}
	none := providerFunc{"none", func(context.Context, string) (Price, error) { return Price{}, nil }}
	bk := NewBook(BookConfig{}, []Provider{bad, none}, []string{"BTC"}, nil)
	bk.Refresh(context.Background())
	_, err := bk.Quote("BTC", time.Now())
	if !errors.Is(err, ErrUnavailable) || strings.Count(err.Error(), "non-positive") != 2 {
		t.Fatalf("error %v", err)
	}
}

func TestRunRefreshesThenStopsOnCancel(t *testing.T) {
	a := newScripted("coinbase")
	a.set("BTC", "97000", t0)
	a.calls = make(chan string, 16)
	bk := NewBook(BookConfig{MinSources: 1}, []Provider{a}, []string{"BTC"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bk.Run(ctx, "@every 1s") }()

	wait := func(what string) {
		t.Helper()
		select {
		case <-a.calls:
		case err := <-done:
			t.Fatalf("Run returned %v while waiting for %s", err, what)
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", what)
		}
	}
	wait("immediate refresh")
	wait("scheduled refresh") // the first refresh has stored its price by now
	if q := mustQuote(t, bk, "BTC", t0); q.Decimal() != "97000" {
		t.Fatalf("quote %s", q.Decimal())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v on cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop on cancel")
	}
}

func TestRunRejectsBadSchedule(t *testing.T) {
	a := newScripted("coinbase")
	a.calls = make(chan string, 1)
	bk := NewBook(BookConfig{}, []Provider{a}, []string{"BTC"}, nil)
	err := bk.Run(context.Background(), "every thirty seconds")
	if err == nil || !strings.Contains(err.Error(), "every thirty seconds") {
		t.Fatalf("error %v, want a schedule error", err)
	}
	if len(a.calls) != 0 {
		t.Fatal("refreshed despite a bad schedule")
	}
	// A valid schedule that never fires must not spin.
	a.set("BTC", "97000", t0)
	if err := bk.Run(context.Background(), "0 0 30 2 *"); err == nil || !strings.Contains(err.Error(), "no next run") {
		t.Fatalf("error %v, want a never-fires error", err)
	}
}

func TestQuoteDecimal(t *testing.T) {
	for r, want := range map[string]string{
		"9700012/100": "97000.12", "97000": "97000", "194000231/2000": "97000.1155",
		"1/3": "0.333333333333333333", "1/1024": "0.0009765625", "10002/10000": "1.0002",
	} {
		if got := (Quote{USDPerUnit: rat(r)}).Decimal(); got != want {
			t.Errorf("Decimal(%s) = %q, want %q", r, got, want)
		}
	}
	if got := (Quote{}).Decimal(); got != "" {
		t.Errorf("empty quote Decimal %q", got)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 9*time.Minute + 59*time.Second: "9m", 2*time.Hour + 5*time.Minute: "2h5m",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestRefreshLogsFailureOnceThenRecovery(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a := newScripted("coinbase")
	a.fail("BTC", errors.New("HTTP 502"))
	bk := NewBook(BookConfig{}, []Provider{a}, []string{"BTC"}, log)
	bk.Refresh(context.Background())
	bk.Refresh(context.Background())
	a.set("BTC", "97000", t0)
	bk.Refresh(context.Background())
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if n := strings.Count(out, `msg="rate fetch failed"`); n != 1 {
		t.Errorf("%d failure warnings, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, `msg="rate fetch recovered"`) || !strings.Contains(out, "component=rates") || !strings.Contains(out, "provider=coinbase") {
		t.Errorf("log lacks recovery or attributes:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// By default a quote needs two fresh sources, and two must agree within
// MaxDeviation: one source can neither set the price alone nor move it by
// the full deviation.
func TestQuoteNeedsTwoAgreeingSourcesByDefault(t *testing.T) {
	a, b := newScripted("coinbase"), newScripted("kraken")
	a.set("BTC", "100000", t0)
	b.fail("BTC", errors.New("connection refused"))
	bk := book(BookConfig{}, a, b)
	bk.Refresh(context.Background())
	if q, err := bk.Quote("BTC", t0); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("one fresh source of two set the price %s by default (err %v)", q.Decimal(), err)
	}
	// 103,900 is within 2% of the pair's median (101,950): before, the pair
	// quoted 101,950, moved 1.95% by one source.
	b.set("BTC", "103900", t0)
	bk.Refresh(context.Background())
	_, err := bk.Quote("BTC", t0)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "disagrees") {
		t.Fatalf("two sources 3.9%% apart: %v, want no quote", err)
	}
	b.set("BTC", "101500", t0)
	bk.Refresh(context.Background())
	if q := mustQuote(t, bk, "BTC", t0); q.Decimal() != "100750" || len(q.Sources) != 2 {
		t.Fatalf("two agreeing sources: %s from %v, want 100750 from both", q.Decimal(), q.Sources)
	}
	// Explicitly single-source: one price is enough.
	single := book(BookConfig{MinSources: 1}, a)
	single.Refresh(context.Background())
	if q := mustQuote(t, single, "BTC", t0); q.Decimal() != "100000" {
		t.Fatalf("single source: %s", q.Decimal())
	}
}
