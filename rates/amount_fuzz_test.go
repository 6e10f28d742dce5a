package rates

import (
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

// FuzzAmountFor: the amount is never negative, has at most `display`
// decimals, covers the USD amount at the rate, and is the smallest such
// amount (one display step less does not).
func FuzzAmountFor(f *testing.F) {
	f.Add(int64(24900), int64(6500012), int64(100), uint8(8), uint8(8))
	f.Add(int64(1), int64(1), int64(3), uint8(18), uint8(6))
	f.Add(int64(1e15), int64(1), int64(1e9), uint8(6), uint8(2))
	f.Add(int64(0), int64(7), int64(1), uint8(9), uint8(0))
	f.Fuzz(func(t *testing.T, usd, num, den int64, dec, disp uint8) {
		decimals, display := int(dec%31), int(disp%31)
		if usd < 0 || usd > 1e15 || num <= 0 || den <= 0 || display > decimals {
			return // AmountFor's documented preconditions (it panics)
		}
		rate := big.NewRat(num, den)
		got := AmountFor(payment.Cents(usd), rate, decimals, display)
		if got.Sign() < 0 {
			t.Fatalf("negative amount %v", got)
		}
		step := pow10(decimals - display)
		if new(big.Int).Rem(got, step).Sign() != 0 {
			t.Fatalf("%v is not a multiple of %v", got, step)
		}
		// value in cents = amount / 10^decimals * rate * 100
		value := func(a *big.Int) *big.Rat {
			v := new(big.Rat).SetFrac(a, pow10(decimals))
			v.Mul(v, rate)
			return v.Mul(v, big.NewRat(100, 1))
		}
		want := new(big.Rat).SetInt64(usd)
		if value(got).Cmp(want) < 0 {
			t.Fatalf("%v base units at %v are worth less than %d cents", got, rate, usd)
		}
		if got.Sign() > 0 {
			less := new(big.Int).Sub(got, step)
			if value(less).Cmp(want) >= 0 {
				t.Fatalf("%v is not the smallest amount: %v also covers %d cents", got, less, usd)
			}
		}
	})
}
