package intents

import (
	"math/big"

	"github.com/paywatch/paywatch/payment"
)

// USDValue is the USD value of units base units at a decimal rate (USD per
// whole unit), rounded down, exactly as the API values transfers; the
// console shows inbox amounts with it.
func USDValue(units *big.Int, rate string, decimals int) payment.Cents {
	return usdValue(units, rate, decimals)
}
