package payment

import (
	"math/big"
	"regexp"
	"testing"
)

var canonicalUSD = regexp.MustCompile(`^(0|[1-9][0-9]*)\.[0-9]{2}$`)

// FuzzParseUSD: a parsed USD amount is non-negative and within the bound,
// formats canonically ("249.00"), and parses back to itself.
func FuzzParseUSD(f *testing.F) {
	for _, s := range []string{"249", "249.5", "249.00", "0.01", "10000000000000.00", "-5", " 5", "5 ", "1e3", "+5", "0x10", "1.005", "007.10", "", ".5", "5.", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseUSD(s)
		if err != nil {
			return
		}
		if c < 0 || c > 1e15 {
			t.Fatalf("ParseUSD(%q) = %d cents, outside [0, 1e15]", s, c)
		}
		out := c.String()
		if !canonicalUSD.MatchString(out) {
			t.Fatalf("ParseUSD(%q).String() = %q, not canonical", s, out)
		}
		back, err := ParseUSD(out)
		if err != nil || back != c {
			t.Fatalf("ParseUSD(%q) = %d, but %q parses to %d (%v)", s, c, out, back, err)
		}
	})
}

// FuzzParseUnits: parsed base units are non-negative, and both display
// forms (FormatUnits, TrimUnits) parse back to the same value.
func FuzzParseUnits(f *testing.F) {
	for _, s := range []string{"0.0005", "249", "1.000000000000000001", "0", "00.10", "1e18", "-1", "0x1"} {
		for _, d := range []uint8{0, 2, 6, 8, 9, 18} {
			f.Add(s, d)
		}
	}
	f.Fuzz(func(t *testing.T, s string, d uint8) {
		decimals := int(d % 40)
		v, err := ParseUnits(s, decimals)
		if err != nil {
			return
		}
		if v.Sign() < 0 {
			t.Fatalf("ParseUnits(%q, %d) = %v < 0", s, decimals, v)
		}
		for _, out := range []string{FormatUnits(v, decimals), TrimUnits(v, decimals)} {
			back, err := ParseUnits(out, decimals)
			if err != nil || back.Cmp(v) != 0 {
				t.Fatalf("ParseUnits(%q, %d) = %v, formatted %q parses to %v (%v)", s, decimals, v, out, back, err)
			}
		}
		if FormatUnits(v, decimals) != FormatUnits(mustParse(t, FormatUnits(v, decimals), decimals), decimals) {
			t.Fatal("FormatUnits is not a fixed point")
		}
	})
}

// FuzzFormatUnits: any non-negative value formats to a string that parses
// back to it.
func FuzzFormatUnits(f *testing.F) {
	f.Add(uint64(50000), uint8(8))
	f.Add(uint64(0), uint8(0))
	f.Add(^uint64(0), uint8(18))
	f.Fuzz(func(t *testing.T, v uint64, d uint8) {
		decimals := int(d % 40)
		want := new(big.Int).SetUint64(v)
		want.Mul(want, want) // reach beyond 64 bits too
		if got := mustParse(t, FormatUnits(want, decimals), decimals); got.Cmp(want) != 0 {
			t.Fatalf("FormatUnits(%v, %d) = %q parses to %v", want, decimals, FormatUnits(want, decimals), got)
		}
	})
}

func mustParse(t *testing.T, s string, decimals int) *big.Int {
	t.Helper()
	v, err := ParseUnits(s, decimals)
	if err != nil {
		t.Fatalf("ParseUnits(%q, %d): %v", s, decimals, err)
	}
	return v
}
