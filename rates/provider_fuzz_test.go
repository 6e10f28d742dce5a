package rates

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"testing"
)

// canned answers every request with one status and body, in memory.
type canned struct {
	status int
	body   []byte
}

func (c canned) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c.body))}, nil
}

// numbersIn returns every JSON string or number of body that parses as a
// rational: the values a price may have been read from.
func numbersIn(body []byte) []*big.Rat {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out []*big.Rat
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		var s string
		switch v := tok.(type) {
		case string:
			s = v
		case json.Number:
			s = v.String()
		default:
			continue
		}
		if len(s) > 200 {
			continue
		}
		if r, ok := new(big.Rat).SetString(s); ok {
			out = append(out, r)
		}
	}
}

var fuzzSymbols = []string{"BTC", "LTC", "ETH", "USDT", "USDC", "TRX", "SOL"}

// FuzzExchangeAnswer feeds every provider's decoder arbitrary answers: a
// price it reports is positive and is a number the answer holds (never one
// it made up), and a refusal is a classified error.
func FuzzExchangeAnswer(f *testing.F) {
	for _, b := range []string{
		`{"data":{"amount":"97000.12","base":"BTC","currency":"USD"}}`,
		`{"data":{"amount":"1.0002","base":"USDT","currency":"USD"}}`,
		`{"error":[],"result":{"XXBTZUSD":{"a":["97000.1","1","1.000"],"b":["96999.9","1","1.000"],"c":["97000.12000","0.001"]}}}`,
		`{"error":["EAPI:Rate limit exceeded"]}`,
		`{"symbol":"BTCUSDT","price":"97000.12000000"}`,
		`{"code":-1121,"msg":"Invalid symbol."}`,
		`{"bitcoin":{"usd":97000.12}}`,
		`{"usd-coin":{"usd":9.998E-1}}`,
		`{"bitcoin":{"usd":1e999999999}}`,
		`{"status":{"error_code":429,"error_message":"rate limited"}}`,
	} {
		for p := uint8(0); p < 4; p++ {
			f.Add(p, uint8(0), uint16(200), []byte(b))
		}
	}
	f.Add(uint8(2), uint8(0), uint16(429), []byte(`{"status":{"error_code":429}}`))
	f.Fuzz(func(t *testing.T, provider, symbol uint8, status uint16, body []byte) {
		hc := &http.Client{Transport: canned{status: int(status%500) + 100, body: body}}
		const base = "http://exchange.invalid"
		p := []Provider{NewCoinbase(base, hc), NewKraken(base, hc), NewCoinGecko(base, hc), NewBinance(base, hc)}[provider%4]
		sym := fuzzSymbols[int(symbol)%len(fuzzSymbols)]
		price, err := p.Price(context.Background(), sym)
		if err != nil {
			var api *APIError
			if !errors.Is(err, ErrInvalidResponse) && !errors.As(err, &api) && !errors.Is(err, ErrUnsupportedSymbol) {
				t.Fatalf("%s %s: unclassified error %v", p.Name(), sym, err)
			}
			return
		}
		if price.USDPerUnit == nil || price.USDPerUnit.Sign() <= 0 || price.Source != p.Name() {
			t.Fatalf("%s %s: price %+v", p.Name(), sym, price)
		}
		for _, r := range numbersIn(body) {
			if r.Cmp(price.USDPerUnit) == 0 {
				return
			}
		}
		t.Fatalf("%s %s: price %v is not a number of the answer %q", p.Name(), sym, price.USDPerUnit, body)
	})
}
