package chains

import (
	"context"
	"math/big"

	"github.com/paywatch/paywatch/payment"
)

// BalanceChecker is implemented by an account-model source that can miss
// native payments: an Ethereum node that cannot trace internal calls does not
// show ETH sent to us by a contract. The scanner then has the Sink reconcile
// the balances of the addresses it waits on (BalanceSink).
type BalanceChecker interface {
	// NeedsBalanceCheck reports whether native payments can be missed (no
	// tracing); when false the scanner never calls NativeBalances.
	NeedsBalanceCheck() bool
	// NativeBalances returns the native balance, in base units, of each key
	// (in order) in the block at (one request per key, batched; the number of
	// calls grows with len(keys) only, never with the watched set).
	NativeBalances(ctx context.Context, keys [][]byte, at BlockRef) ([]*big.Int, error)
}

// BalanceSink is implemented by a Sink that reconciles native balances: at
// the confirmation depth of each open intent it turns the part of the
// address's balance that no recorded transfer explains into a finance item.
// Calling it again at the same tips records nothing new.
type BalanceSink interface {
	CheckBalances(ctx context.Context, network payment.Network, tips Tips, src BalanceChecker) error
}
