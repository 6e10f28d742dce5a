package rates

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The bodies below are the documented wire formats of each exchange (see the
// source notes on each provider type): success bodies as the APIs send them,
// and each API's own error envelope.

// exchange is an httptest server that checks the request it gets and answers
// with a fixed status and body.
type exchange struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func serve(t *testing.T, wantPath string, wantQuery map[string]string, status int, body string) *exchange {
	t.Helper()
	e := &exchange{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		if r.Method != http.MethodGet {
			t.Errorf("method %s, want GET", r.Method)
		}
		if r.URL.Path != wantPath {
			t.Errorf("path %q, want %q", r.URL.Path, wantPath)
			http.NotFound(w, r)
			return
		}
		for k, v := range wantQuery {
			if got := r.URL.Query().Get(k); got != v {
				t.Errorf("query %s=%q, want %q", k, got, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad rat " + s)
	}
	return r
}

// providerCase is one exchange answer and what Price must make of it.
type providerCase struct {
	name   string
	symbol string
	path   string
	query  map[string]string
	status int
	body   string
	// want is the exact price on success; otherwise the error checks apply.
	want        string
	wantIs      []error  // errors.Is targets
	wantStatus  int      // *APIError status, when an API error is expected
	wantInError []string // substrings of the error message
}

func runProviderCases(t *testing.T, build func(base string) Provider, cases []providerCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := serve(t, tc.path, tc.query, tc.status, tc.body)
			p := build(ex.srv.URL)
			before := time.Now()
			got, err := p.Price(context.Background(), tc.symbol)
			if tc.want != "" {
				if err != nil {
					t.Fatalf("Price(%s): %v", tc.symbol, err)
				}
				if got.USDPerUnit.Cmp(rat(tc.want)) != 0 {
					t.Fatalf("price %s, want exactly %s", got.USDPerUnit.RatString(), tc.want)
				}
				if got.Source != p.Name() {
					t.Errorf("source %q, want %q", got.Source, p.Name())
				}
				if got.At.Before(before) || got.At.After(time.Now()) {
					t.Errorf("At %v not within the call", got.At)
				}
				return
			}
			if err == nil {
				t.Fatalf("Price(%s) = %s, want an error", tc.symbol, got.USDPerUnit.RatString())
			}
			for _, target := range tc.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("error %q is not %v", err, target)
				}
			}
			var ae *APIError
			if tc.wantStatus != 0 {
				if !errors.As(err, &ae) {
					t.Fatalf("error %q is not an *APIError", err)
				}
				if ae.Status != tc.wantStatus {
					t.Errorf("status %d, want %d", ae.Status, tc.wantStatus)
				}
			} else if errors.As(err, &ae) {
				t.Errorf("error %q is an *APIError, want a response-shape error", err)
			}
			if tc.wantStatus != 429 && tc.wantStatus != 418 && !isRateCase(tc) && errors.Is(err, ErrRateLimited) {
				t.Errorf("error %q wrongly wraps ErrRateLimited", err)
			}
			for _, s := range append(tc.wantInError, p.Name(), tc.symbol) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func isRateCase(tc providerCase) bool {
	for _, e := range tc.wantIs {
		if e == ErrRateLimited {
			return true
		}
	}
	return false
}

func TestCoinbase(t *testing.T) {
	const path = "/v2/prices/BTC-USD/spot"
	ok := func(amount string) string {
		return `{"data":{"amount":"` + amount + `","base":"BTC","currency":"USD"}}`
	}
	runProviderCases(t, func(base string) Provider { return NewCoinbase(base, nil) }, []providerCase{
		{name: "spot", symbol: "BTC", path: path, status: 200, body: ok("97000.12"), want: "9700012/100"},
		{name: "usdt", symbol: "USDT", path: "/v2/prices/USDT-USD/spot", status: 200,
			body: `{"data":{"amount":"1.0002","base":"USDT","currency":"USD"}}`, want: "10002/10000"},
		{name: "not found", symbol: "BTC", path: path, status: 404,
			body:       `{"errors":[{"id":"not_found","message":"Invalid base currency"}]}`,
			wantStatus: 404, wantInError: []string{"not_found", "Invalid base currency", "404"}},
		{name: "rate limited", symbol: "BTC", path: path, status: 429,
			body:   `{"errors":[{"id":"rate_limit_exceeded","message":"Too many requests"}]}`,
			wantIs: []error{ErrRateLimited}, wantStatus: 429, wantInError: []string{"Too many requests"}},
		{name: "server error", symbol: "BTC", path: path, status: 500,
			body:       "<html><body>502 Bad Gateway</body></html>",
			wantStatus: 500, wantInError: []string{"500", "Bad Gateway"}},
		{name: "garbage", symbol: "BTC", path: path, status: 200, body: `{"data":{"amount":`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"malformed JSON"}},
		{name: "negative", symbol: "BTC", path: path, status: 200, body: ok("-97000.12"),
			wantIs: []error{ErrInvalidResponse}},
		{name: "zero", symbol: "BTC", path: path, status: 200, body: ok("0.00"),
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"not positive"}},
		{name: "exponent", symbol: "BTC", path: path, status: 200, body: ok("9.7e4"),
			wantIs: []error{ErrInvalidResponse}},
		{name: "missing amount", symbol: "BTC", path: path, status: 200, body: `{"data":{"base":"BTC","currency":"USD"}}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"data.amount"}},
		{name: "other currency", symbol: "BTC", path: path, status: 200,
			body:   `{"data":{"amount":"90000.00","base":"BTC","currency":"EUR"}}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"EUR"}},
	})
}

func TestKraken(t *testing.T) {
	const path = "/0/public/Ticker"
	btc := map[string]string{"pair": "XBTUSD"}
	ticker := func(key, last string) string {
		return `{"error":[],"result":{"` + key + `":{"a":["97000.20000","1","1.000"],"b":["97000.00000","2","2.000"],` +
			`"c":["` + last + `","0.00100000"],"v":["100.1","2000.2"],"p":["96900.1","96800.2"],"t":[1000,20000],` +
			`"l":["96000.0","95000.0"],"h":["98000.0","99000.0"],"o":"96500.00000"}}}`
	}
	runProviderCases(t, func(base string) Provider { return NewKraken(base, nil) }, []providerCase{
		{name: "xbt", symbol: "BTC", path: path, query: btc, status: 200, body: ticker("XXBTZUSD", "97000.10000"), want: "970001/10"},
		{name: "usdt", symbol: "USDT", path: path, query: map[string]string{"pair": "USDTUSD"}, status: 200,
			body: ticker("USDTZUSD", "1.00020000"), want: "10002/10000"},
		{name: "sol", symbol: "SOL", path: path, query: map[string]string{"pair": "SOLUSD"}, status: 200,
			body: ticker("SOLUSD", "180.25"), want: "18025/100"},
		{name: "renamed key", symbol: "BTC", path: path, query: btc, status: 200, body: ticker("XBTUSD", "97000.1"), want: "970001/10"},
		{name: "unknown pair", symbol: "BTC", path: path, query: btc, status: 200, body: `{"error":["EQuery:Unknown asset pair"]}`,
			wantStatus: 200, wantInError: []string{"EQuery:Unknown asset pair"}},
		{name: "rate limited in body", symbol: "BTC", path: path, query: btc, status: 200, body: `{"error":["EGeneral:Too many requests"]}`,
			wantIs: []error{ErrRateLimited}, wantStatus: 200, wantInError: []string{"Too many requests"}},
		{name: "429", symbol: "BTC", path: path, query: btc, status: 429, body: `{"error":["EAPI:Rate limit exceeded"]}`,
			wantIs: []error{ErrRateLimited}, wantStatus: 429, wantInError: []string{"Rate limit exceeded"}},
		{name: "500", symbol: "BTC", path: path, query: btc, status: 500, body: `{"error":["EService:Unavailable"]}`,
			wantStatus: 500, wantInError: []string{"EService:Unavailable"}},
		{name: "garbage", symbol: "BTC", path: path, query: btc, status: 200, body: `not json`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "negative", symbol: "BTC", path: path, query: btc, status: 200, body: ticker("XXBTZUSD", "-1.00000"),
			wantIs: []error{ErrInvalidResponse}},
		{name: "zero", symbol: "BTC", path: path, query: btc, status: 200, body: ticker("XXBTZUSD", "0.00000"),
			wantIs: []error{ErrInvalidResponse}},
		{name: "no last trade", symbol: "BTC", path: path, query: btc, status: 200, body: `{"error":[],"result":{"XXBTZUSD":{"c":[]}}}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"last trade"}},
		{name: "wrong pairs", symbol: "BTC", path: path, query: btc, status: 200,
			body:   `{"error":[],"result":{"XETHZUSD":{"c":["3000.0","1"]},"XLTCZUSD":{"c":["90.0","1"]}}}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"XXBTZUSD"}},
	})
}

func TestBinance(t *testing.T) {
	const path = "/api/v3/ticker/price"
	btc := map[string]string{"symbol": "BTCUSDT"}
	runProviderCases(t, func(base string) Provider { return NewBinance(base, nil) }, []providerCase{
		{name: "btcusdt", symbol: "BTC", path: path, query: btc, status: 200,
			body: `{"symbol":"BTCUSDT","price":"97000.12000000"}`, want: "9700012/100"},
		{name: "usdcusdt", symbol: "USDC", path: path, query: map[string]string{"symbol": "USDCUSDT"}, status: 200,
			body: `{"symbol":"USDCUSDT","price":"0.99980000"}`, want: "9998/10000"},
		{name: "invalid symbol", symbol: "BTC", path: path, query: btc, status: 400, body: `{"code":-1121,"msg":"Invalid symbol."}`,
			wantStatus: 400, wantInError: []string{"-1121", "Invalid symbol."}},
		{name: "429", symbol: "BTC", path: path, query: btc, status: 429,
			body:   `{"code":-1003,"msg":"Too much request weight used; current limit is 6000 request weight per 1 MINUTE."}`,
			wantIs: []error{ErrRateLimited}, wantStatus: 429, wantInError: []string{"Too much request weight"}},
		{name: "418 ban", symbol: "BTC", path: path, query: btc, status: 418,
			body:   `{"code":-1003,"msg":"Way too much request weight used; IP banned until 1700000000000."}`,
			wantIs: []error{ErrRateLimited}, wantStatus: 418},
		{name: "500", symbol: "BTC", path: path, query: btc, status: 500, body: `Internal Server Error`,
			wantStatus: 500, wantInError: []string{"Internal Server Error"}},
		{name: "garbage", symbol: "BTC", path: path, query: btc, status: 200, body: `{"symbol":"BTCUSDT","price":97000.12}`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "negative", symbol: "BTC", path: path, query: btc, status: 200, body: `{"symbol":"BTCUSDT","price":"-97000.12000000"}`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "zero", symbol: "BTC", path: path, query: btc, status: 200, body: `{"symbol":"BTCUSDT","price":"0.00000000"}`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "other symbol", symbol: "BTC", path: path, query: btc, status: 200, body: `{"symbol":"ETHUSDT","price":"3000.00000000"}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"ETHUSDT"}},
	})
}

func TestBinanceRefusesUSDT(t *testing.T) {
	ex := serve(t, "/api/v3/ticker/price", nil, 200, `{"symbol":"USDTUSDT","price":"1.00000000"}`)
	_, err := NewBinance(ex.srv.URL, nil).Price(context.Background(), "USDT")
	if !errors.Is(err, ErrUnsupportedSymbol) {
		t.Fatalf("Price(USDT) error %v, want ErrUnsupportedSymbol", err)
	}
	if n := ex.calls.Load(); n != 0 {
		t.Fatalf("made %d requests for USDT, want none", n)
	}
}

func TestCoinGecko(t *testing.T) {
	const path = "/api/v3/simple/price"
	btc := map[string]string{"ids": "bitcoin", "vs_currencies": "usd", "precision": "full"}
	runProviderCases(t, func(base string) Provider { return NewCoinGecko(base, nil) }, []providerCase{
		{name: "bitcoin", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":97000.12}}`, want: "9700012/100"},
		// More digits than a float64 holds: parsed from the literal, exactly.
		{name: "full precision", symbol: "BTC", path: path, query: btc, status: 200,
			body: `{"bitcoin":{"usd":97000.123456789012345678}}`, want: "97000123456789012345678/1000000000000000000"},
		{name: "exponent", symbol: "USDC", path: path, query: map[string]string{"ids": "usd-coin"}, status: 200,
			body: `{"usd-coin":{"usd":9.998E-1}}`, want: "9998/10000"},
		{name: "tether", symbol: "USDT", path: path, query: map[string]string{"ids": "tether"}, status: 200,
			body: `{"tether":{"usd":1.0002}}`, want: "10002/10000"},
		{name: "unknown id", symbol: "BTC", path: path, query: btc, status: 200, body: `{}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"bitcoin"}},
		{name: "429", symbol: "BTC", path: path, query: btc, status: 429,
			body:   `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits."}}`,
			wantIs: []error{ErrRateLimited}, wantStatus: 429, wantInError: []string{"exceeded the Rate Limit"}},
		{name: "invalid vs_currency", symbol: "BTC", path: path, query: btc, status: 400, body: `{"error":"invalid vs_currency"}`,
			wantStatus: 400, wantInError: []string{"invalid vs_currency"}},
		{name: "500", symbol: "BTC", path: path, query: btc, status: 500, body: `<html>oops</html>`,
			wantStatus: 500, wantInError: []string{"oops"}},
		{name: "garbage", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":97000.12}`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "string price", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":"97000.12"}}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"not a number"}},
		{name: "negative", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":-97000.12}}`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "zero", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":0}}`,
			wantIs: []error{ErrInvalidResponse}},
		{name: "huge exponent", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":1e999999999}}`,
			wantIs: []error{ErrInvalidResponse}, wantInError: []string{"exponent"}},
		{name: "null", symbol: "BTC", path: path, query: btc, status: 200, body: `{"bitcoin":{"usd":null}}`,
			wantIs: []error{ErrInvalidResponse}},
	})
}

func TestProvidersRejectOversizedBody(t *testing.T) {
	big := `{"bitcoin":{"usd":97000.12},"pad":"` + strings.Repeat("x", maxBody) + `"}`
	ex := serve(t, "/api/v3/simple/price", nil, 200, big)
	_, err := NewCoinGecko(ex.srv.URL, nil).Price(context.Background(), "BTC")
	if !errors.Is(err, ErrInvalidResponse) || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("error %v, want an oversized-body ErrInvalidResponse", err)
	}
}

func TestProvidersRejectBadSymbols(t *testing.T) {
	ex := serve(t, "/", nil, 200, `{}`)
	for _, p := range []Provider{NewCoinbase(ex.srv.URL, nil), NewKraken(ex.srv.URL, nil), NewBinance(ex.srv.URL, nil), NewCoinGecko(ex.srv.URL, nil)} {
		for _, sym := range []string{"", "btc", "BTC/../x", "B"} {
			if _, err := p.Price(context.Background(), sym); !errors.Is(err, ErrUnsupportedSymbol) {
				t.Errorf("%s.Price(%q) error %v, want ErrUnsupportedSymbol", p.Name(), sym, err)
			}
		}
	}
	if _, err := NewCoinGecko(ex.srv.URL, nil).Price(context.Background(), "DOGE"); !errors.Is(err, ErrUnsupportedSymbol) {
		t.Errorf("coingecko DOGE error %v, want ErrUnsupportedSymbol", err)
	}
	if n := ex.calls.Load(); n != 0 {
		t.Errorf("made %d requests for unusable symbols, want none", n)
	}
}

func TestProviderHonoursContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := NewKraken(srv.URL, nil).Price(ctx, "BTC")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	if got := describe(err); got != "timeout" {
		t.Fatalf("describe = %q, want timeout", got)
	}
}

func TestStatic(t *testing.T) {
	p := NewStatic(map[string]string{"BTC": "97000.12", "USDT": "1.0002", "BAD": "1e5", "NEG": "-1", "ZERO": "0"})
	if p.Name() != "static" {
		t.Fatalf("name %q", p.Name())
	}
	got, err := p.Price(context.Background(), "USDT")
	if err != nil || got.USDPerUnit.Cmp(rat("1.0002")) != 0 {
		t.Fatalf("USDT = %v, %v; want 1.0002", got.USDPerUnit, err)
	}
	got.USDPerUnit.SetInt64(5) // must not change the table
	if again, _ := p.Price(context.Background(), "USDT"); again.USDPerUnit.Cmp(rat("1.0002")) != 0 {
		t.Fatalf("table changed through a returned price: %s", again.USDPerUnit.RatString())
	}
	if _, err := p.Price(context.Background(), "ETH"); !errors.Is(err, ErrUnsupportedSymbol) {
		t.Errorf("ETH error %v, want ErrUnsupportedSymbol", err)
	}
	for _, sym := range []string{"BAD", "NEG", "ZERO"} {
		if _, err := p.Price(context.Background(), sym); !errors.Is(err, ErrInvalidResponse) {
			t.Errorf("%s error %v, want ErrInvalidResponse", sym, err)
		}
	}
}

// NewStaticPrices answers config's resolved prices as NewStatic answers
// its decimals, and keeps its own copy of them.
func TestStaticPrices(t *testing.T) {
	in := map[string]*big.Rat{"BTC": rat("97000.12")}
	p := NewStaticPrices(in)
	in["BTC"].SetInt64(1)
	got, err := p.Price(context.Background(), "BTC")
	if err != nil || p.Name() != "static" || got.USDPerUnit.Cmp(rat("97000.12")) != 0 {
		t.Fatalf("BTC = %v, %v; want 97000.12 from static", got.USDPerUnit, err)
	}
	got.USDPerUnit.SetInt64(5)
	if again, _ := p.Price(context.Background(), "BTC"); again.USDPerUnit.Cmp(rat("97000.12")) != 0 {
		t.Fatalf("table changed through a returned price: %s", again.USDPerUnit.RatString())
	}
	if _, err := p.Price(context.Background(), "ETH"); !errors.Is(err, ErrUnsupportedSymbol) {
		t.Errorf("ETH error %v, want ErrUnsupportedSymbol", err)
	}
}

func TestNewProvider(t *testing.T) {
	for name, base := range map[string]string{"coinbase": CoinbaseURL, "kraken": KrakenURL, "binance": BinanceURL, "coingecko": CoinGeckoURL} {
		p, err := NewProvider(name, "", nil)
		if err != nil {
			t.Fatalf("NewProvider(%q): %v", name, err)
		}
		if p.Name() != name {
			t.Errorf("NewProvider(%q).Name() = %q", name, p.Name())
		}
		var got string
		switch v := p.(type) {
		case *coinbase:
			got = v.base
		case *kraken:
			got = v.base
		case *binance:
			got = v.base
		case *coingecko:
			got = v.base
		}
		if got != base {
			t.Errorf("%s default base %q, want %q", name, got, base)
		}
		p, _ = NewProvider(name, "http://127.0.0.1:1/", nil)
		if n := p.Name(); n != name {
			t.Errorf("with base URL: name %q", n)
		}
	}
	for _, name := range []string{"static", "bitstamp", ""} {
		if _, err := NewProvider(name, "", nil); !errors.Is(err, ErrUnknownProvider) {
			t.Errorf("NewProvider(%q) error %v, want ErrUnknownProvider", name, err)
		}
	}
}
