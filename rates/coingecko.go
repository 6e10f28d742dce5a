package rates

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// CoinGecko's public "Coin Price by IDs" (keyless tier):
//
//	GET https://api.coingecko.com/api/v3/simple/price?ids=bitcoin&vs_currencies=usd&precision=full
//	200 {"bitcoin":{"usd":97000.12}}
//	200 {}                                                      (unknown id)
//	429 {"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit. ..."}}
//	4xx {"error":"invalid vs_currency"}
//
// The price is a JSON number, not a string: the body is decoded with
// json.Decoder.UseNumber and the literal is parsed exactly into a big.Rat
// (exponent notation such as 1.2e-05 included), never through float64.
//
// Sources: https://docs.coingecko.com/reference/simple-price (ids,
// vs_currencies, precision=full); https://docs.coingecko.com/docs/errors-and-rate-limits
// (status codes; the {"status":{"error_code","error_message"}} and
// {"error":"..."} shapes are the ones clients such as tundra-connect
// normalise).
type coingecko struct {
	base   string
	client *http.Client
}

var _ Provider = (*coingecko)(nil)

// NewCoinGecko returns the CoinGecko provider. baseURL "" means CoinGeckoURL
// (the keyless public API); a nil client means a shared client with a 30s
// timeout.
func NewCoinGecko(baseURL string, c *http.Client) Provider {
	return &coingecko{base: baseOr(baseURL, CoinGeckoURL), client: clientOr(c)}
}

func (p *coingecko) Name() string { return "coingecko" }

// coingeckoIDs maps our symbols to CoinGecko coin ids.
var coingeckoIDs = map[string]string{
	"BTC":  "bitcoin",
	"LTC":  "litecoin",
	"ETH":  "ethereum",
	"TRX":  "tron",
	"SOL":  "solana",
	"USDT": "tether",
	"USDC": "usd-coin",
}

func (p *coingecko) Price(ctx context.Context, symbol string) (Price, error) {
	name := p.Name()
	if err := checkSymbol(name, symbol); err != nil {
		return Price{}, err
	}
	id, ok := coingeckoIDs[symbol]
	if !ok {
		return Price{}, fail(name, symbol, fmt.Errorf("%w: no CoinGecko id for %s", ErrUnsupportedSymbol, symbol))
	}
	q := url.Values{"ids": {id}, "vs_currencies": {"usd"}, "precision": {"full"}}
	status, body, err := get(ctx, p.client, p.base+"/api/v3/simple/price?"+q.Encode(), name, symbol)
	if err != nil {
		return Price{}, err
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	jerr := dec.Decode(&doc)
	if jerr == nil && dec.More() {
		jerr = fmt.Errorf("trailing data after JSON object")
	}
	code, msg, isErr := coingeckoError(doc)
	if status != http.StatusOK || (jerr == nil && isErr) {
		ae := &APIError{Provider: name, Symbol: symbol, Status: status}
		if jerr == nil && isErr {
			ae.Code, ae.Message = code, msg
			ae.rateLimited = code == "429"
		} else {
			ae.Message = excerpt(body)
		}
		return Price{}, fail(name, symbol, ae)
	}
	if jerr != nil {
		return Price{}, invalid(name, symbol, "malformed JSON: %v", jerr)
	}
	coin, ok := doc[id].(map[string]any)
	if !ok {
		return Price{}, invalid(name, symbol, "no %q object in %q", id, excerpt(body))
	}
	raw, ok := coin["usd"]
	if !ok {
		return Price{}, invalid(name, symbol, "no usd price for %q", id)
	}
	n, ok := raw.(json.Number)
	if !ok {
		return Price{}, invalid(name, symbol, "usd price for %q is %T, not a number", id, raw)
	}
	v, err := parseNumber(name, symbol, n)
	if err != nil {
		return Price{}, err
	}
	return Price{Source: name, USDPerUnit: v, At: time.Now()}, nil
}

// coingeckoError recognises CoinGecko's two error shapes.
func coingeckoError(doc map[string]any) (code, msg string, ok bool) {
	if doc == nil {
		return "", "", false
	}
	if s, isMap := doc["status"].(map[string]any); isMap {
		if m, has := s["error_message"]; has {
			msg = fmt.Sprint(m)
			if c, has := s["error_code"].(json.Number); has {
				code = c.String()
			}
			return code, msg, true
		}
	}
	switch e := doc["error"].(type) {
	case string:
		return "", e, true
	case map[string]any: // {"error":{"status":{...}}} seen on some 401s
		return coingeckoError(e)
	}
	return "", "", false
}
