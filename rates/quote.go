package rates

import (
	"math/big"
	"strings"
	"time"
)

// Quote is the rate the Book gives for a symbol at one moment, with what it
// was made from. An intent stores it as its locked rate.
type Quote struct {
	// Symbol is the quoted ticker ("BTC").
	Symbol string
	// USDPerUnit is the median of the used prices: USD per whole unit.
	USDPerUnit *big.Rat
	// Sources names the providers whose prices were used, in provider order.
	Sources []string
	// At is the time of the oldest price used.
	At time.Time
}

// Decimal returns the rate as a plain decimal string without trailing zeros
// ("97000.12", "1.0002"). It is exact for every quote a Book makes: the
// median of decimals, or the mean of two decimals, is a finite decimal. A
// rate with no finite decimal form (not produced by a Book) is rounded to 18
// places.
func (q Quote) Decimal() string {
	if q.USDPerUnit == nil {
		return ""
	}
	return decimalString(q.USDPerUnit)
}

// decimalString formats r exactly when its denominator is 2^a·5^b, with
// max(a, b) places and trailing zeros removed.
func decimalString(r *big.Rat) string {
	den := new(big.Int).Set(r.Denom())
	twos := den.TrailingZeroBits()
	den.Rsh(den, twos)
	fives := uint(0)
	five, mod := big.NewInt(5), new(big.Int)
	q := new(big.Int)
	for {
		q.QuoRem(den, five, mod)
		if mod.Sign() != 0 {
			break
		}
		den.Set(q)
		fives++
	}
	places := int(max(twos, fives))
	if den.Cmp(big.NewInt(1)) != 0 {
		places = 18
	}
	s := r.FloatString(places)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}
