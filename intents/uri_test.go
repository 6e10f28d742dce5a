package intents_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/paywatchtest"
)

// Payment URIs: BIP21 for BTC/LTC, EIP-681 for ETH and ERC-20, tron: for
// Tron, Solana Pay for SOL; amounts exact, in the form each wallet expects.
func TestPaymentURIs(t *testing.T) {
	e := paywatchtest.New(t)
	cases := []struct {
		method, usd string
		check       func(v, addr, units string) bool
	}{
		{"BTC", "249.00", func(u, a, _ string) bool { return u == "bitcoin:"+a+"?amount=0.00498" }},
		{"LTC", "249.00", func(u, a, _ string) bool { return u == "litecoin:"+a+"?amount=2.49" }},
		{"ETH", "250.00", func(u, a, units string) bool {
			return u == "ethereum:"+a+"?value="+units && units == "100000000000000000"
		}},
		{"USDT-ERC20", "249.00", func(u, a, units string) bool {
			return u == "ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7/transfer?address="+a+"&uint256=249000000" && units == "249000000"
		}},
		{"USDC-ERC20", "10.00", func(u, a, _ string) bool {
			return u == "ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48/transfer?address="+a+"&uint256=10000000"
		}},
		{"TRX", "10.00", func(u, a, _ string) bool { return u == "tron:"+a+"?amount=40" }},
		{"USDT-TRC20", "249.00", func(u, a, _ string) bool {
			return u == "tron:"+a+"?amount=249&token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
		}},
		{"SOL", "20.00", func(u, a, _ string) bool { return strings.HasPrefix(u, "solana:"+a+"?amount=0.1&label=") }},
	}
	for i, c := range cases {
		v := e.CreateIntent("order", "ORD-URI-"+string(rune('a'+i)), "", c.usd, c.method)
		if !c.check(v.PaymentURI, v.Address, v.AmountBaseUnits) {
			t.Errorf("%s: payment_uri %q (address %s, units %s)", c.method, v.PaymentURI, v.Address, v.AmountBaseUnits)
		}
		if _, err := url.Parse(v.PaymentURI); err != nil {
			t.Errorf("%s: %v", c.method, err)
		}
	}
}
