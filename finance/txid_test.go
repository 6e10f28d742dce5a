package finance

import (
	"strings"
	"testing"

	"github.com/mr-tron/base58"
)

func TestRefundTxIDShapePerNetwork(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(7*i + 1)
	}
	sig := base58.Encode(raw) // a signature is 64 bytes
	short := base58.Encode(raw[:32])
	for _, c := range []struct {
		network, in, want string
		ok                bool
	}{
		{"bitcoin", hex64, hex64, true},
		{"bitcoin", "  " + strings.ToUpper(hex64) + "\n", hex64, true},
		{"litecoin", hex64, hex64, true},
		{"tron", hex64, hex64, true},
		{"ethereum", "0x" + hex64, "0x" + hex64, true},
		{"ethereum", " 0X" + strings.ToUpper(hex64) + " ", "0x" + hex64, true},
		{"solana", " " + sig + " ", sig, true},
		{"bitcoin", " =HYPERLINK(\"https://evil.example\",\"" + hex64 + "\")", "", false},
		{"bitcoin", "0x" + hex64, "", false},
		{"bitcoin", hex64[:62], "", false},
		{"bitcoin", hex64 + "00", "", false},
		{"bitcoin", strings.Repeat("zz", 32), "", false},
		{"bitcoin", hex64[:32] + " " + hex64[33:], "", false},
		{"tron", "0x" + hex64, "", false},
		{"ethereum", hex64, "", false},
		{"ethereum", "0x" + hex64[:62], "", false},
		{"solana", hex64, "", false},
		{"solana", short, "", false},
		{"solana", "=" + sig[1:], "", false},
		{"solana", "0OIl" + sig[4:], "", false},
		{"bitcoin", "", "", false},
		{"nowhere", hex64, "", false},
	} {
		got, err := refundTxID(c.network, c.in)
		if c.ok && (err != nil || got != c.want) {
			t.Errorf("%s %q: %q, %v; want %q", c.network, c.in, got, err, c.want)
		}
		if !c.ok && err == nil {
			t.Errorf("%s %q: accepted as %q", c.network, c.in, got)
		}
	}
}
