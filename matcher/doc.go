// Package matcher decides what the transfers seen at one intent's address
// mean: the intent's new status and the classification of every transfer
// (settles, partial, overpaid, late, duplicate, wrong_asset, dust,
// reverted). It implements the "Intent lifecycle" and "Matching" sections of
// DESIGN.md and nothing else. The statuses and classifications themselves
// are package payment's (payment.IntentStatus, payment.Classification), the
// one place every package takes them from.
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
// lateness and status but never a payable paid elsewhere: a payable is paid
// at most once, so a credit that comes too late is a duplicate and the
// caller can never be told to mark a second intent of a payable paid.
// A transfer finance resolved otherwise (Transfer.Resolved: refunded,
// ignored, credited to an account) never counts on its own again (DESIGN.md
// invariant 7), except that an overpayment whose surplus was resolved still
// pays within a complete paying set. Counting transfers add up in
// FirstSeen order until they reach Amount minus Tolerance; those that come
// after are duplicates. The intent is paid once every transfer of that
// paying set is confirmed.
//
// A paid intent keeps its paying set (DESIGN.md invariant 6): while every
// transfer it last classified Settles or Overpaid still counts, is confirmed
// and covers the amount, any other transfer is a duplicate whatever its
// FirstSeen (block times lag and lead). Only a paying transfer that leaves
// the chain makes the set be recomputed in FirstSeen order.
//
// Everything except Settles needs review by finance (Classification.NeedsReview).
package matcher
