package rates

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Kraken's public REST API, "Get Ticker Information" (no authentication):
//
//	GET https://api.kraken.com/0/public/Ticker?pair=XBTUSD
//	200 {"error":[],"result":{"XXBTZUSD":{"a":[...],"b":[...],"c":["97000.10000","0.00100000"],...}}}
//	200 {"error":["EQuery:Unknown asset pair"]}
//	200 {"error":["EGeneral:Too many requests"]}  (also "EAPI:Rate limit exceeded")
//
// Kraken reports errors in the "error" array, usually with status 200. The
// result is keyed by Kraken's own pair name (XBT for bitcoin, X/Z prefixes for
// legacy assets), which differs from the name asked for. c is "last trade
// closed: [price, lot volume]"; we quote c[0].
//
// Sources: https://docs.kraken.com/api-reference/market-data/get-ticker-information
// (OpenAPI TickerResponse: error array, result map, c = [price, lot volume]);
// https://docs.kraken.com/exchange/guides/general/errors (error array, E-prefixed
// strings; "EAPI:Rate limit exceeded", "EGeneral:Too many requests").
type kraken struct {
	base   string
	client *http.Client
}

var _ Provider = (*kraken)(nil)

// NewKraken returns the Kraken ticker provider. baseURL "" means KrakenURL; a
// nil client means a shared client with a 30s timeout.
func NewKraken(baseURL string, c *http.Client) Provider {
	return &kraken{base: baseOr(baseURL, KrakenURL), client: clientOr(c)}
}

func (p *kraken) Name() string { return "kraken" }

// krakenPairs maps our symbols to the pair we ask for and the key Kraken
// answers with.
var krakenPairs = map[string]struct{ ask, key string }{
	"BTC":  {"XBTUSD", "XXBTZUSD"},
	"LTC":  {"LTCUSD", "XLTCZUSD"},
	"ETH":  {"ETHUSD", "XETHZUSD"},
	"TRX":  {"TRXUSD", "TRXUSD"},
	"SOL":  {"SOLUSD", "SOLUSD"},
	"USDT": {"USDTUSD", "USDTZUSD"},
	"USDC": {"USDCUSD", "USDCUSD"},
}

func krakenRateLimit(msg string) bool {
	return strings.Contains(msg, "Too many requests") || strings.Contains(msg, "Rate limit exceeded")
}

func (p *kraken) Price(ctx context.Context, symbol string) (Price, error) {
	name := p.Name()
	if err := checkSymbol(name, symbol); err != nil {
		return Price{}, err
	}
	pair, ok := krakenPairs[symbol]
	if !ok {
		pair.ask, pair.key = symbol+"USD", symbol+"USD"
	}
	status, body, err := get(ctx, p.client, p.base+"/0/public/Ticker?pair="+url.QueryEscape(pair.ask), name, symbol)
	if err != nil {
		return Price{}, err
	}
	var r struct {
		Error  []string `json:"error"`
		Result map[string]struct {
			C []string `json:"c"`
		} `json:"result"`
	}
	jerr := json.Unmarshal(body, &r)
	if status != http.StatusOK || (jerr == nil && len(r.Error) > 0) {
		ae := &APIError{Provider: name, Symbol: symbol, Status: status}
		if jerr == nil && len(r.Error) > 0 {
			ae.Message = strings.Join(r.Error, "; ")
			ae.rateLimited = krakenRateLimit(ae.Message)
		} else {
			ae.Message = excerpt(body)
		}
		return Price{}, fail(name, symbol, ae)
	}
	if jerr != nil {
		return Price{}, invalid(name, symbol, "malformed JSON: %v", jerr)
	}
	t, ok := r.Result[pair.key]
	if !ok {
		// We asked for exactly one pair; if Kraken renamed its key, the
		// only entry is still the answer.
		if len(r.Result) != 1 {
			return Price{}, invalid(name, symbol, "no %s in result of %d pairs", pair.key, len(r.Result))
		}
		for _, only := range r.Result {
			t = only
		}
	}
	if len(t.C) == 0 {
		return Price{}, invalid(name, symbol, "no last trade price (c) for %s", pair.key)
	}
	v, err := parsePrice(name, symbol, t.C[0])
	if err != nil {
		return Price{}, err
	}
	return Price{Source: name, USDPerUnit: v, At: time.Now()}, nil
}
