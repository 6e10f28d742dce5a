// Package payment defines the vocabulary every other package shares: the eight
// payment methods (an asset on a network), US dollar amounts in cents, and exact
// crypto amounts in base units.
//
// Guarantees: money is never a float. USD amounts are integer cents (Cents);
// crypto amounts are non-negative *big.Int base units (satoshi, litoshi, wei,
// token unit, sun, lamport). Decimal strings exist only at the edges, through
// ParseUSD/Cents.String and ParseUnits/FormatUnits, which reject anything that
// would lose precision.
package payment
