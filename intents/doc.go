// Package intents is the payment core: it creates payment instructions
// (payable, locked quote, fresh address, exact amount, deadline), renews
// and reports them, keeps the pre-derived addresses topped up, and decides
// every intent with the pure matcher whenever something it depends on
// changed. It changes when the intent lifecycle or the decision changes.
//
// Its neighbours call the decision through a small API: the scanner sink
// (package ingest) and finance (package finance) call Redecide in their own
// transaction for the intents they touched, and finance calls
// RedecidePayable once a debit paid a payable. The commands' vocabulary,
// Result, Outcome, Idem and the typed *Error (with Replay and Idempotent
// for an Idempotency-Key), is defined here and shared by finance and
// reports; only package api maps it to HTTP.
//
// Guarantees:
//   - An intent, its address allocation and its intent.created event are
//     written in one transaction; concurrent creations never share an address.
//   - Every status change happens under the payable's then the intent's row
//     lock, in one transaction with its events and ledger entries; side
//     effects (watch-set updates) run only after commit.
//   - The matcher's decision is recomputed from all of an intent's transfers
//     on every change, so replaying a block or a sweep changes nothing.
//   - A paid top-up is credited exactly once net; a reverted one is reversed
//     by a compensating entry, never deleted.
//   - A request whose Idempotency-Key already completed is answered with its
//     stored response before any validation or availability check.
//   - An intent is never created for an amount below its method's dust
//     minimum (it could never be paid).
package intents
