package rates

import (
	"fmt"
	"math/big"

	"github.com/paywatch/paywatch/payment"
)

// AmountFor converts usd to base units of an asset with `decimals` decimals
// at usdPerUnit USD per whole unit: ceil(usd / rate · 10^decimals), then
// rounded up to a multiple of 10^(decimals-display) so the amount has at most
// `display` decimals and a person can type it. The arithmetic is exact and
// never rounds down, so amount · rate ≥ usd always holds, and the amount is
// the smallest such multiple.
//
// AmountFor panics when usd is negative, usdPerUnit is nil or not positive,
// or display is not within [0, decimals]: those are programming errors (a
// Book never quotes a non-positive rate; payment.ParseUSD rejects negative
// amounts).
func AmountFor(usd payment.Cents, usdPerUnit *big.Rat, decimals, display int) *big.Int {
	if usd < 0 {
		panic(fmt.Sprintf("rates.AmountFor: negative USD amount %s", usd))
	}
	if usdPerUnit == nil || usdPerUnit.Sign() <= 0 {
		panic("rates.AmountFor: rate must be positive")
	}
	if display < 0 || display > decimals {
		panic(fmt.Sprintf("rates.AmountFor: display %d not within [0, %d]", display, decimals))
	}
	// ceil(x / step) · step with x = usd·10^decimals/(100·rate) and
	// step = 10^(decimals-display) is ceil(usd·10^display/(100·rate)) · step,
	// because ceil(ceil(y)/n) = ceil(y/n) for a positive integer n.
	// usd·10^display / (100 · num/den) = usd·10^display·den / (100·num).
	num := new(big.Int).Mul(big.NewInt(int64(usd)), pow10(display))
	num.Mul(num, usdPerUnit.Denom())
	den := new(big.Int).Mul(big.NewInt(100), usdPerUnit.Num())
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Mul(q, pow10(decimals-display))
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
