package rates

import (
	"math"
	"math/big"

	"github.com/paywatch/paywatch/payment"
)

// MinimumUSD is the smallest USD amount (at least one cent) whose
// AmountFor at usdPerUnit is at least dust base units: the smallest order a
// method can be paid with, since a smaller one asks for an amount the
// matcher classifies as dust. AmountFor grows with the USD amount, so every
// amount from MinimumUSD on is payable and every smaller one is not; the
// search is exact (no floating point). It panics as AmountFor does.
func MinimumUSD(dust *big.Int, usdPerUnit *big.Rat, decimals, display int) payment.Cents {
	lo := payment.Cents(1)
	if dust == nil || AmountFor(lo, usdPerUnit, decimals, display).Cmp(dust) >= 0 {
		return lo
	}
	// hi = ceil(dust · rate · 100 / 10^decimals) cents buys at least dust,
	// since AmountFor never rounds down.
	v := new(big.Rat).SetFrac(new(big.Int).Mul(dust, big.NewInt(100)), pow10(decimals))
	v.Mul(v, usdPerUnit)
	q, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		q.SetInt64(math.MaxInt64) // a misconfigured minimum; AmountFor is exact at any size
	}
	hi := payment.Cents(q.Int64())
	// Invariant: AmountFor(lo) < dust <= AmountFor(hi).
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if AmountFor(mid, usdPerUnit, decimals, display).Cmp(dust) >= 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
