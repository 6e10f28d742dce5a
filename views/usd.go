package views

import (
	"math/big"

	"github.com/paywatch/paywatch/payment"
)

// Decimals returns the decimals of an asset on a network (0 for none of
// the methods).
func Decimals(network, asset string) int {
	if m, ok := payment.MethodFor(payment.Network(network), payment.Asset(asset)); ok {
		return m.Decimals
	}
	return 0
}

// USDValue is the USD value of units base units at a decimal rate (USD per
// whole unit), rounded down (what was received is never overstated),
// exactly as the API values transfers; finance credits and the console's
// inbox amounts use it too.
func USDValue(units *big.Int, rate string, decimals int) payment.Cents {
	r, ok := new(big.Rat).SetString(rate)
	if !ok || units == nil {
		return 0
	}
	v := new(big.Rat).SetInt(units)
	v.Mul(v, r)
	v.Mul(v, big.NewRat(100, 1))
	v.Quo(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	q := new(big.Int).Quo(v.Num(), v.Denom())
	if !q.IsInt64() {
		return 0
	}
	return payment.Cents(q.Int64())
}
