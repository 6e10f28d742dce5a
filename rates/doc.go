// Package rates quotes USD prices of the assets paywatch accepts, from several
// public exchange APIs, and converts USD amounts into exact crypto amounts.
//
// A Provider is one exchange's public price endpoint (Coinbase, Kraken,
// Binance, CoinGecko, or a static table configured by name for the sandbox).
// A Book refreshes every (provider, symbol) pair on a robfig/cron schedule and
// answers Quote(symbol, now) with the median of the fresh, non-outlying
// prices, recording which sources and times it used. AmountFor turns a USD
// amount and a quoted rate into base units, rounded up to the method's
// display precision.
//
// Guarantees:
//   - Never a default rate. A quote comes only from prices an exchange sent
//     within BookConfig.MaxAge of now; otherwise Quote fails with an
//     *UnavailableError wrapping ErrUnavailable that names every source and
//     why it was not used, e.g. `no fresh BTC/USD rate from 2 sources
//     (coinbase: timeout; kraken: stale 9m)`. Stablecoins are quoted like any
//     other asset; USDT is not assumed to be 1 USD.
//   - Exact money. Prices are parsed from the API's decimal text straight into
//     big.Rat (CoinGecko's JSON numbers through json.Number, never float64);
//     medians and AmountFor are exact rational arithmetic.
//   - Outliers are dropped: a fresh price further than MaxDeviation (default
//     2%) from the median of all fresh prices is not used. Two sources that
//     disagree by more than twice MaxDeviation give no quote at all.
//   - The customer never underpays because of rounding: AmountFor rounds up,
//     so amount·rate ≥ usd, and the amount is the smallest display-precision
//     amount with that property.
//   - A failing provider keeps its last good price until that price ages past
//     MaxAge; its last error is kept for the unavailability message.
//   - Provider answers are checked: non-200 statuses become *APIError with
//     the exchange's own message (429/418 and rate-limit codes wrap
//     ErrRateLimited); malformed JSON, missing fields, non-decimal, zero or
//     negative prices wrap ErrInvalidResponse; bodies are read through a
//     1 MiB limit. Nothing panics on bad input from the network.
//   - Binance prices are USDT prices reported as USD (Binance has no USD
//     books worth using); the outlier rule bounds the error this introduces,
//     and Binance refuses to quote USDT itself.
//
// The Book is safe for concurrent use; Run stops cleanly when its context
// ends and returns nil.
package rates
