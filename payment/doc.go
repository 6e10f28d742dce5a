// Package payment defines the vocabulary every other package shares: the eight
// payment methods (an asset on a network), US dollar amounts in cents, exact
// crypto amounts in base units, and the closed sets of states (states.go):
// intent status, transfer classification and status, payable kind, ledger
// entry type and event type, each a named type with a Valid method.
//
// Guarantees: money is never a float. USD amounts are integer cents (Cents);
// crypto amounts are non-negative *big.Int base units (satoshi, litoshi, wei,
// token unit, sun, lamport). Decimal strings exist only at the edges, through
// ParseUSD/Cents.String and ParseUnits/FormatUnits, which reject anything that
// would lose precision.
package payment
