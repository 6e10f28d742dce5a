package rates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Provider is one public exchange API. Each exchange has its own small
// implementation; the Book combines them.
type Provider interface {
	// Name identifies the provider in quotes, logs and error messages
	// ("coinbase", "kraken", ...).
	Name() string
	// Price returns the USD price of one whole unit of symbol ("BTC", "LTC",
	// "ETH", "TRX", "SOL", "USDT", "USDC"). It never returns a default: any
	// doubt is an error.
	Price(ctx context.Context, symbol string) (Price, error)
}

// Price is one provider's answer for one symbol.
type Price struct {
	// Source is the provider's Name.
	Source string
	// USDPerUnit is the exact decimal the API sent, always > 0.
	USDPerUnit *big.Rat
	// At is when the price was fetched.
	At time.Time
}

// ErrUnavailable is wrapped by every error of Book.Quote: no rate can be given
// for the symbol right now (intent creation answers `rate_unavailable`).
var ErrUnavailable = errors.New("rate unavailable")

// ErrRateLimited is wrapped by provider errors when the exchange refused the
// request for exceeding its request rate (HTTP 429, Binance's 418 ban, or
// Kraken's rate-limit error strings).
var ErrRateLimited = errors.New("rate limited")

// ErrUnsupportedSymbol is wrapped when a provider cannot quote a symbol at all
// (e.g. USDT on Binance, whose prices are in USDT; a symbol missing from a
// static table; a malformed symbol).
var ErrUnsupportedSymbol = errors.New("symbol not supported")

// ErrInvalidResponse is wrapped when an exchange answered 200 with a body that
// is not the documented shape: malformed JSON, a missing field, a price that
// is not a decimal, or a zero or negative price.
var ErrInvalidResponse = errors.New("invalid rate response")

// ErrUnknownProvider is returned by NewProvider for a name it cannot build.
var ErrUnknownProvider = errors.New("unknown rate provider")

// APIError is an exchange's refusal: a non-200 status, or an error the API
// reported in its own error field (Kraken answers errors with status 200).
type APIError struct {
	// Provider is the provider's Name.
	Provider string
	// Symbol is the symbol that was asked for.
	Symbol string
	// Status is the HTTP status code.
	Status int
	// Code is the API's own error code, when it sends one ("not_found",
	// "-1121", "429"); may be empty.
	Code string
	// Message is the API's own error message, or a short excerpt of the body
	// when the body is not the API's error shape.
	Message string

	rateLimited bool
}

// Error names the provider, symbol, status and the API's own message.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Provider, e.Symbol, e.Status)
	if e.Code != "" {
		b.WriteString(" ")
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap returns ErrRateLimited when the exchange refused for request rate.
func (e *APIError) Unwrap() error {
	if e.RateLimited() {
		return ErrRateLimited
	}
	return nil
}

// RateLimited reports whether the exchange refused for request rate.
func (e *APIError) RateLimited() bool {
	return e.rateLimited || e.Status == http.StatusTooManyRequests || e.Status == http.StatusTeapot
}

// reason is the short form the Book shows in ErrUnavailable messages.
func (e *APIError) reason() string {
	var b strings.Builder
	if e.RateLimited() {
		b.WriteString("rate limited, ")
	}
	fmt.Fprintf(&b, "HTTP %d", e.Status)
	if e.Code != "" {
		b.WriteString(" ")
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// fetchError attaches the provider and symbol to a failure, so logs and
// messages say which call failed while the Book can still show the short
// cause.
type fetchError struct {
	provider, symbol string
	err              error
}

func (e *fetchError) Error() string { return e.provider + " " + e.symbol + ": " + e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

func fail(provider, symbol string, err error) error {
	return &fetchError{provider: provider, symbol: symbol, err: err}
}

func invalid(provider, symbol, format string, args ...any) error {
	return fail(provider, symbol, fmt.Errorf("%w: "+format, append([]any{ErrInvalidResponse}, args...)...))
}

// maxBody bounds every response body: a price answer is a few hundred bytes.
const maxBody = 1 << 20

// defaultClient is used when a constructor is given a nil *http.Client. The
// Book also bounds every call with its own per-call timeout.
var defaultClient = &http.Client{Timeout: 30 * time.Second}

// get performs one GET and returns the status and the body (at most maxBody
// bytes; a longer body is an error rather than a silently truncated one).
func get(ctx context.Context, c *http.Client, url, provider, symbol string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, fail(provider, symbol, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "paywatch-rates/1")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fail(provider, symbol, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return resp.StatusCode, nil, fail(provider, symbol, fmt.Errorf("reading HTTP %d body: %w", resp.StatusCode, err))
	}
	if len(body) > maxBody {
		return resp.StatusCode, nil, fail(provider, symbol, fmt.Errorf("%w: HTTP %d body exceeds %d bytes", ErrInvalidResponse, resp.StatusCode, maxBody))
	}
	return resp.StatusCode, body, nil
}

// excerpt is a short printable prefix of a body that is not the API's error
// shape (an HTML error page from a proxy, say).
func excerpt(body []byte) string {
	s := strings.TrimSpace(string(body))
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%d bytes of non-UTF-8 body", len(body))
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	const max = 160
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// parsePrice parses a price sent as a JSON string: a plain non-negative
// decimal ("97000.12000000"), no sign, exponent or separators, and > 0.
func parsePrice(provider, symbol, s string) (*big.Rat, error) {
	if !plainDecimal(s) {
		return nil, invalid(provider, symbol, "price %q is not a plain decimal", truncate(s))
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, invalid(provider, symbol, "price %q is not a plain decimal", truncate(s))
	}
	if r.Sign() <= 0 {
		return nil, invalid(provider, symbol, "price %q is not positive", s)
	}
	return r, nil
}

// parseNumber parses a price sent as a JSON number literal (CoinGecko),
// exactly: "97000.12" is 9700012/100, "1.2e-05" is 12/1000000. The exponent is
// bounded so a hostile body cannot make us build a gigantic integer.
func parseNumber(provider, symbol string, n json.Number) (*big.Rat, error) {
	s := string(n)
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if !plainDecimal(strings.TrimPrefix(mant, "-")) {
		return nil, invalid(provider, symbol, "price %q is not a decimal number", truncate(s))
	}
	if hasExp {
		e, err := strconv.Atoi(exp)
		if err != nil || e < -64 || e > 64 {
			return nil, invalid(provider, symbol, "price %q has an unusable exponent", truncate(s))
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, invalid(provider, symbol, "price %q is not a decimal number", truncate(s))
	}
	if r.Sign() <= 0 {
		return nil, invalid(provider, symbol, "price %q is not positive", s)
	}
	return r, nil
}

func plainDecimal(s string) bool {
	if s == "" || len(s) > 80 {
		return false
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") {
		return false
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// checkSymbol rejects anything but a short upper-case ticker before it is
// put into a URL.
func checkSymbol(provider, symbol string) error {
	if len(symbol) < 2 || len(symbol) > 10 {
		return fail(provider, symbol, fmt.Errorf("%w: %q is not a ticker", ErrUnsupportedSymbol, symbol))
	}
	for i := 0; i < len(symbol); i++ {
		c := symbol[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return fail(provider, symbol, fmt.Errorf("%w: %q is not an upper-case ticker", ErrUnsupportedSymbol, symbol))
		}
	}
	return nil
}

func baseOr(baseURL, def string) string {
	if baseURL == "" {
		baseURL = def
	}
	return strings.TrimRight(baseURL, "/")
}

func clientOr(c *http.Client) *http.Client {
	if c == nil {
		return defaultClient
	}
	return c
}

// Default base URLs of the public APIs.
const (
	CoinbaseURL  = "https://api.coinbase.com"
	KrakenURL    = "https://api.kraken.com"
	BinanceURL   = "https://api.binance.com"
	CoinGeckoURL = "https://api.coingecko.com"
)

// NewProvider builds a provider by name: "coinbase", "kraken", "binance" or
// "coingecko". An empty baseURL means the exchange's public API; a nil client
// means a shared client with a 30s timeout. "static" is not built here
// because it needs its prices: use NewStatic.
func NewProvider(name, baseURL string, c *http.Client) (Provider, error) {
	switch name {
	case "coinbase":
		return NewCoinbase(baseURL, c), nil
	case "kraken":
		return NewKraken(baseURL, c), nil
	case "binance":
		return NewBinance(baseURL, c), nil
	case "coingecko":
		return NewCoinGecko(baseURL, c), nil
	case "static":
		return nil, fmt.Errorf("%w: %q needs its prices; build it with NewStatic", ErrUnknownProvider, name)
	default:
		return nil, fmt.Errorf("%w: %q (known: coinbase, kraken, binance, coingecko, static)", ErrUnknownProvider, name)
	}
}
