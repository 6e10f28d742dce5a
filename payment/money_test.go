package payment

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestParseUSD(t *testing.T) {
	good := map[string]Cents{"249": 24900, "249.5": 24950, "249.00": 24900, "0.01": 1, "0": 0, "10000.00": 1000000}
	for in, want := range good {
		got, err := ParseUSD(in)
		if err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1.00", "+1", "1.001", "1e3", " 1", "1.", ".5", "1,00", "0x10", "１", "99999999999999999.00"} {
		if _, err := ParseUSD(in); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("ParseUSD(%q) err = %v, want ErrInvalidAmount", in, err)
		}
	}
}

func TestCentsString(t *testing.T) {
	for c, want := range map[Cents]string{0: "0.00", 1: "0.01", 24900: "249.00", -5: "-0.05", 123456789: "1234567.89"} {
		if got := c.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(c), got, want)
		}
	}
}

func TestUnitsRoundTrip(t *testing.T) {
	cases := []struct {
		s   string
		dec int
		v   string
		out string
	}{
		{"0.0005", 8, "50000", "0.00050000"},
		{"1", 18, "1000000000000000000", "1.000000000000000000"},
		{"532.079999", 6, "532079999", "532.079999"},
		{"0", 9, "0", "0.000000000"},
		{"7", 0, "7", "7"},
	}
	for _, c := range cases {
		v, err := ParseUnits(c.s, c.dec)
		if err != nil || v.String() != c.v {
			t.Fatalf("ParseUnits(%q, %d) = %v, %v; want %s", c.s, c.dec, v, err, c.v)
		}
		if got := FormatUnits(v, c.dec); got != c.out {
			t.Fatalf("FormatUnits(%s, %d) = %q, want %q", v, c.dec, got, c.out)
		}
	}
	if _, err := ParseUnits("0.123456789", 8); !errors.Is(err, ErrInvalidAmount) {
		t.Fatalf("9 decimals for an 8-decimal asset: err = %v", err)
	}
	if got := TrimUnits(big.NewInt(50000), 8); got != "0.0005" {
		t.Fatalf("TrimUnits = %q", got)
	}
	if got := TrimUnits(big.NewInt(249000000), 6); got != "249" {
		t.Fatalf("TrimUnits = %q", got)
	}
}

func TestMethods(t *testing.T) {
	if len(Methods) != 8 {
		t.Fatalf("%d methods, want 8", len(Methods))
	}
	seen := map[[2]string]bool{}
	for _, m := range Methods {
		k := [2]string{string(m.Network), string(m.Asset)}
		if seen[k] {
			t.Fatalf("two methods for %v", k)
		}
		seen[k] = true
		if got, ok := MethodFor(m.Network, m.Asset); !ok || got.Method != m.Method {
			t.Fatalf("MethodFor(%s, %s) = %v", m.Network, m.Asset, got.Method)
		}
	}
	if _, ok := LookupMethod("DOGE"); ok {
		t.Fatal("DOGE is not a method")
	}
	if _, ok := MethodFor(Tron, USDC); ok {
		t.Fatal("USDC on Tron is not a paywatch method")
	}
}

// TestParseUnitsRefusesWhatItsDisplayCannotParse: an amount written in 61
// characters with 39 decimals displays in 101, past the 100-character
// bound, so it is refused when parsed, not accepted and then unreadable in
// its own display (found by FuzzParseUnits; the seed is in testdata).
func TestParseUnitsRefusesWhatItsDisplayCannotParse(t *testing.T) {
	long := "1" + strings.Repeat("0", 60)
	if v, err := ParseUnits(long, 39); err == nil {
		t.Fatalf("ParseUnits(%q, 39) = %v, whose display %q is %d characters", long, v, FormatUnits(v, 39), len(FormatUnits(v, 39)))
	}
	// One digit fewer displays in exactly 100 characters and round-trips.
	ok := "1" + strings.Repeat("0", 59)
	v, err := ParseUnits(ok, 39)
	if err != nil {
		t.Fatalf("ParseUnits(%q, 39): %v", ok, err)
	}
	back, err := ParseUnits(FormatUnits(v, 39), 39)
	if err != nil || back.Cmp(v) != 0 {
		t.Fatalf("%q does not parse back: %v %v", FormatUnits(v, 39), back, err)
	}
}
