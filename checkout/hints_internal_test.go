package checkout

import (
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

// The hints that keep a payment from being lost are shown where they
// apply, in every language: TRX for energy beside a token on Tron, ETH for
// gas beside a token on Ethereum, and for every method what an exchange
// withdrawal must be (its network, the fee on top) (issue 35 item 5).
func TestHintsWhereTheyApply(t *testing.T) {
	for _, l := range Languages() {
		for _, m := range payment.Methods {
			got := strings.Join(hints(l, m), "\n")
			trx := strings.Contains(got, l.T("hint.trx_energy"))
			gas := strings.Contains(got, l.T("hint.eth_gas", "symbol", m.Symbol))
			if want := m.Network == payment.Tron && m.Asset != payment.Native; trx != want {
				t.Errorf("%s %s: TRX energy hint %v, want %v", l.Tag, m.Method, trx, want)
			}
			if want := m.Network == payment.Ethereum && m.Asset != payment.Native; gas != want {
				t.Errorf("%s %s: ETH gas hint %v, want %v", l.Tag, m.Method, gas, want)
			}
			if !strings.Contains(got, l.T("hint.exchange", "method", l.T("method."+string(m.Method)))) || !strings.Contains(got, l.T("method."+string(m.Method))) {
				t.Errorf("%s %s: no exchange hint naming the method: %q", l.Tag, m.Method, got)
			}
		}
	}
	// The words themselves: TRX in the Tron hint, ETH in the gas hint.
	for _, l := range Languages() {
		if !strings.Contains(l.T("hint.trx_energy"), "TRX") || !strings.Contains(l.T("hint.eth_gas"), "ETH") {
			t.Errorf("%s: hints without the fee coin", l.Tag)
		}
	}
}

// An address is shown in groups that together are exactly the address.
func TestAddressGroups(t *testing.T) {
	for _, a := range []string{"", "abc", "abcd", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf", "bc1qquv9lg5g2r4jkr0ahun0ddfg5xntxjelwjpnuw"} {
		g := groups(a, 4)
		if strings.Join(g, "") != a {
			t.Errorf("groups(%q) = %q", a, g)
		}
		for _, x := range g[:len(g)-1] {
			if len(x) != 4 {
				t.Errorf("groups(%q) = %q", a, g)
			}
		}
	}
}
