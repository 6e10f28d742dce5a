// Package matcher decides what the transfers seen at one intent's address
// mean: the intent's new status and the classification of every transfer
// (settles, partial, overpaid, late, duplicate, wrong_asset, dust,
// reverted). It implements the "Intent lifecycle" and "Matching" sections of
// DESIGN.md and nothing else.
//
// Guarantees:
//
//   - Pure: Decide performs no I/O, reads no clock (now is a parameter), keeps
//     no state between calls and never modifies its arguments. It is safe for
//     concurrent use.
//   - Deterministic and recomputed from scratch: the decision depends only on
//     the intent, the transfers and now. Transfers are considered in
//     FirstSeen order, ties broken by their position in the slice, so the
//     slice order does not matter as long as the caller lists transfers that
//     share a FirstSeen in a stable order (e.g. by natural key).
//   - Idempotent: deciding again with the decision's status as Intent.Status
//     and its classes as Transfer.Previous returns the same decision.
//   - Exact: amounts are *big.Int base units, never floats. The decision's
//     integers are never nil and belong to the caller.
//   - Total: malformed input (nil or negative amounts) never panics; a nil
//     or negative transfer amount is dust and never counts.
//
// A transfer counts towards an intent when it is in the intent's asset, is
// not dust, was first seen no later than the deadline, the intent is not
// superseded and its payable was not paid by another intent, unless finance
// credited it to the intent (Transfer.Credited), which overrides dust,
// lateness and status. Counting transfers add up in FirstSeen order until
// they reach Amount minus Tolerance; those that come after are duplicates.
// The intent is paid once every transfer of that paying set is confirmed.
//
// Everything except Settles needs review by finance (Classification.NeedsReview).
package matcher
