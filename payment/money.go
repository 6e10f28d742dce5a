package payment

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// ErrInvalidAmount is returned for a decimal string that is not a valid
// amount: empty, signed, too many decimals, or out of range.
var ErrInvalidAmount = errors.New("invalid amount")

// Cents is an amount of US dollars in cents. It is the only USD type: a USD
// amount never passes through a float.
type Cents int64

// ParseUSD parses a decimal US dollar amount with at most two decimals, such
// as "249", "249.5" or "249.00". Signs, exponents and more than two decimals
// are rejected; so is anything above 1e13 USD.
func ParseUSD(s string) (Cents, error) {
	u, err := parseDecimal(s, 2)
	if err != nil {
		return 0, err
	}
	if !u.IsInt64() || u.Int64() > 1e15 {
		return 0, fmt.Errorf("%w: %q is too large", ErrInvalidAmount, s)
	}
	return Cents(u.Int64()), nil
}

// String formats c as a decimal with exactly two places, e.g. "249.00".
func (c Cents) String() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign = "-"
		if v == math.MinInt64 {
			return "-92233720368547758.08"
		}
		v = -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// Rat returns c as an exact number of dollars.
func (c Cents) Rat() *big.Rat { return big.NewRat(int64(c), 100) }

// ParseUnits parses a decimal amount of an asset with the given number of
// decimals into base units: ParseUnits("0.0005", 8) is 50000. More decimals
// than the asset has, signs and exponents are rejected.
func ParseUnits(s string, decimals int) (*big.Int, error) {
	return parseDecimal(s, decimals)
}

// FormatUnits formats base units as a decimal with exactly `decimals` places:
// FormatUnits(50000, 8) is "0.00050000".
func FormatUnits(v *big.Int, decimals int) string {
	if v == nil {
		v = new(big.Int)
	}
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if decimals > 0 {
		if len(digits) <= decimals {
			digits = strings.Repeat("0", decimals-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// TrimUnits formats base units with trailing zeros removed ("0.0005",
// "249"), the form payment URIs use.
func TrimUnits(v *big.Int, decimals int) string {
	s := FormatUnits(v, decimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// parseDecimal turns a plain non-negative decimal into an integer scaled by
// 10^decimals, failing when the value has more decimals than that.
func parseDecimal(s string, decimals int) (*big.Int, error) {
	if s == "" || len(s) > 100 {
		return nil, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") {
		return nil, fmt.Errorf("%w: %q is not a plain decimal number", ErrInvalidAmount, s)
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return nil, fmt.Errorf("%w: %q is not a plain non-negative decimal number", ErrInvalidAmount, s)
			}
		}
	}
	if len(frac) > decimals {
		return nil, fmt.Errorf("%w: %q has more than %d decimals", ErrInvalidAmount, s, decimals)
	}
	frac += strings.Repeat("0", decimals-len(frac))
	v, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
	}
	// The bound is on the value's written form too: an amount accepted
	// here is one its own display (FormatUnits) parses back to, so a value
	// that takes more than 100 characters with all its decimals is refused
	// however it was written.
	if len(FormatUnits(v, decimals)) > 100 {
		return nil, fmt.Errorf("%w: %q takes more than 100 characters written with %d decimals", ErrInvalidAmount, s, decimals)
	}
	return v, nil
}
