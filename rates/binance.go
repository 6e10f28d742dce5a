package rates

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Binance's spot "Symbol price ticker" (no authentication):
//
//	GET https://api.binance.com/api/v3/ticker/price?symbol=BTCUSDT
//	200 {"symbol":"BTCUSDT","price":"97000.12000000"}
//	400 {"code":-1121,"msg":"Invalid symbol."}
//	429 {"code":-1003,"msg":"Too much request weight used; ..."}   (418 once the IP is banned)
//
// Binance has no USD order books that matter: this provider quotes the
// symbol's USDT pair and reports USDT as USD. That is an approximation the
// Book keeps in check, since a Binance price further than MaxDeviation from
// the median of the other sources is dropped as an outlier. USDT itself
// cannot be quoted against USDT, so Price("USDT") fails with
// ErrUnsupportedSymbol. Binance.com refuses some regions (HTTP 451); that is
// reported like any other refusal.
//
// Sources: https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints
// (ticker/price); https://developers.binance.com/docs/binance-spot-api-docs/errors
// ({"code":-1121,"msg":"Invalid symbol."}, 429/418 limits).
type binance struct {
	base   string
	client *http.Client
}

var _ Provider = (*binance)(nil)

// NewBinance returns the Binance provider, which quotes USDT pairs as USD
// (see the type's notes). baseURL "" means BinanceURL; a nil client means a
// shared client with a 30s timeout.
func NewBinance(baseURL string, c *http.Client) Provider {
	return &binance{base: baseOr(baseURL, BinanceURL), client: clientOr(c)}
}

func (p *binance) Name() string { return "binance" }

func (p *binance) Price(ctx context.Context, symbol string) (Price, error) {
	name := p.Name()
	if err := checkSymbol(name, symbol); err != nil {
		return Price{}, err
	}
	if symbol == "USDT" {
		return Price{}, fail(name, symbol, fmt.Errorf("%w: binance quotes in USDT, so it cannot price USDT itself", ErrUnsupportedSymbol))
	}
	pair := symbol + "USDT"
	status, body, err := get(ctx, p.client, p.base+"/api/v3/ticker/price?symbol="+url.QueryEscape(pair), name, symbol)
	if err != nil {
		return Price{}, err
	}
	var r struct {
		Code   *int64  `json:"code"`
		Msg    string  `json:"msg"`
		Symbol string  `json:"symbol"`
		Price  *string `json:"price"`
	}
	jerr := json.Unmarshal(body, &r)
	if status != http.StatusOK || (jerr == nil && r.Code != nil) {
		ae := &APIError{Provider: name, Symbol: symbol, Status: status}
		if jerr == nil && r.Code != nil {
			ae.Code, ae.Message = strconv.FormatInt(*r.Code, 10), r.Msg
			ae.rateLimited = *r.Code == -1003
		} else {
			ae.Message = excerpt(body)
		}
		return Price{}, fail(name, symbol, ae)
	}
	if jerr != nil {
		return Price{}, invalid(name, symbol, "malformed JSON: %v", jerr)
	}
	if r.Price == nil {
		return Price{}, invalid(name, symbol, "no price in %q", excerpt(body))
	}
	if r.Symbol != pair {
		return Price{}, invalid(name, symbol, "answer is for %q, not %s", r.Symbol, pair)
	}
	v, err := parsePrice(name, symbol, *r.Price)
	if err != nil {
		return Price{}, err
	}
	return Price{Source: name, USDPerUnit: v, At: time.Now()}, nil
}
