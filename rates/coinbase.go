package rates

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Coinbase's public Data API, "Get Spot Price" (no authentication):
//
//	GET https://api.coinbase.com/v2/prices/BTC-USD/spot
//	200 {"data":{"amount":"97000.12","base":"BTC","currency":"USD"}}
//	404 {"errors":[{"id":"not_found","message":"Invalid base currency"}]}
//	429 {"errors":[{"id":"rate_limit_exceeded","message":"Too many requests"}]}
//
// Sources: https://docs.cdp.coinbase.com/coinbase-app/track-apis/prices
// (endpoint table and examples); the v2 error envelope {"errors":[{"id",
// "message"}]} as seen in public captures (gist nicosuave/03a6483dec5244af6dc7).
type coinbase struct {
	base   string
	client *http.Client
}

var _ Provider = (*coinbase)(nil)

// NewCoinbase returns the Coinbase spot-price provider. baseURL "" means
// CoinbaseURL; a nil client means a shared client with a 30s timeout.
func NewCoinbase(baseURL string, c *http.Client) Provider {
	return &coinbase{base: baseOr(baseURL, CoinbaseURL), client: clientOr(c)}
}

func (p *coinbase) Name() string { return "coinbase" }

type coinbaseErrors struct {
	Errors []struct {
		ID      string `json:"id"`
		Message string `json:"message"`
	} `json:"errors"`
}

func (p *coinbase) Price(ctx context.Context, symbol string) (Price, error) {
	name := p.Name()
	if err := checkSymbol(name, symbol); err != nil {
		return Price{}, err
	}
	status, body, err := get(ctx, p.client, p.base+"/v2/prices/"+url.PathEscape(symbol+"-USD")+"/spot", name, symbol)
	if err != nil {
		return Price{}, err
	}
	if status != http.StatusOK {
		ae := &APIError{Provider: name, Symbol: symbol, Status: status}
		var e coinbaseErrors
		if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
			ae.Code, ae.Message = e.Errors[0].ID, e.Errors[0].Message
			ae.rateLimited = e.Errors[0].ID == "rate_limit_exceeded"
		} else {
			ae.Message = excerpt(body)
		}
		return Price{}, fail(name, symbol, ae)
	}
	var r struct {
		coinbaseErrors
		Data *struct {
			Amount   *string `json:"amount"`
			Base     string  `json:"base"`
			Currency string  `json:"currency"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Price{}, invalid(name, symbol, "malformed JSON: %v", err)
	}
	if len(r.Errors) > 0 {
		return Price{}, fail(name, symbol, &APIError{Provider: name, Symbol: symbol, Status: status, Code: r.Errors[0].ID, Message: r.Errors[0].Message})
	}
	if r.Data == nil || r.Data.Amount == nil {
		return Price{}, invalid(name, symbol, "no data.amount in %q", excerpt(body))
	}
	if r.Data.Currency != "USD" || (r.Data.Base != "" && r.Data.Base != symbol) {
		return Price{}, invalid(name, symbol, "answer is for %s-%s, not %s-USD", r.Data.Base, r.Data.Currency, symbol)
	}
	v, err := parsePrice(name, symbol, *r.Data.Amount)
	if err != nil {
		return Price{}, err
	}
	return Price{Source: name, USDPerUnit: v, At: time.Now()}, nil
}
