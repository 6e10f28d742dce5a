// Package intents is the payment core: it creates payment instructions
// (payable, locked quote, fresh address, exact amount, deadline), and applies
// every observed change (a transfer seen, confirmed, orphaned; a deadline
// passed; a finance decision) by asking the pure matcher and writing its
// decision.
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
//   - A reconciliation as of a past time is the same every time it is
//     computed (it reads the history of transfers, intents and node
//     heights); a closed period is served exactly as stored when closed.
package intents
