package checkout

import (
	"math/big"
	"testing"
)

// restURI replaces the amount of every payment URI shape the API gives,
// and refuses a URI whose amount is not the intent's.
func TestRestURI(t *testing.T) {
	cases := []struct {
		uri        string
		full, rest int64
		decimals   int
		want       string
	}{
		{"bitcoin:bcrt1qx?amount=0.0005", 50000, 20000, 8, "bitcoin:bcrt1qx?amount=0.0002"},
		{"litecoin:rltc1qx?amount=0.25", 25000000, 1, 8, "litecoin:rltc1qx?amount=0.00000001"},
		{"ethereum:0xabc?value=10000000000000000", 10000000000000000, 4000000000000000, 18, "ethereum:0xabc?value=4000000000000000"},
		{"ethereum:0xdac/transfer?address=0xabc&uint256=25000000", 25000000, 5000000, 6, "ethereum:0xdac/transfer?address=0xabc&uint256=5000000"},
		{"tron:TX?amount=100", 100000000, 40000000, 6, "tron:TX?amount=40"},
		{"tron:TX?amount=25&token=TR7", 25000000, 12500000, 6, "tron:TX?amount=12.5&token=TR7"},
		{"solana:So1?amount=0.125&label=ORD-1", 125000000, 25000000, 9, "solana:So1?amount=0.025&label=ORD-1"},
		{"bitcoin:bcrt1qx?amount=0.0006", 50000, 20000, 8, ""}, // not the intent's amount
		{"bitcoin:bcrt1qx", 50000, 20000, 8, ""},
		{"bitcoin:bcrt1qx?amount=0.0005", 50000, 0, 8, ""},
	}
	for _, c := range cases {
		if got := restURI(c.uri, big.NewInt(c.full), big.NewInt(c.rest), c.decimals); got != c.want {
			t.Errorf("restURI(%q) = %q, want %q", c.uri, got, c.want)
		}
	}
}
