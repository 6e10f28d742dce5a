// Package matcher decides what the transfers to an intent mean, and so what
// a payable's intents are: the intent's status and each transfer's
// classification (settles, partial, overpaid, late, duplicate, wrong_asset,
// dust, reverted) and the part of it that pays the intent. It implements
// the "Intent lifecycle" and "Decisions are a function of today's facts"
// sections of docs/behaviour.md, and nothing else. The statuses and
// classifications themselves are package payment's.
//
// A decision is a function of today's facts: the transfers on the best
// chain (or in the mempool) with their confirmations, those that left it,
// finance's decisions (what each covers, what was credited to the intent),
// the intent (amount, tolerance, dust minimum, deadline, renewed or not,
// paid once or not) and the clock. It never reads an earlier decision, so
// the same facts give the same books however the chain got there: a block
// reorged out and mined again gives back what it took.
//
// Guarantees:
//
//   - Pure: Decide and DecidePayable perform no I/O, read no clock (now is
//     a parameter), keep no state between calls and never modify their
//     arguments. They are safe for concurrent use.
//   - Deterministic: the decision depends only on the facts; transfers are
//     counted in the order they were recorded (Transfer.Order, a sequence),
//     ties in input order.
//   - Exact: amounts are *big.Int base units, never floats. The decision's
//     integers are never nil and belong to the caller.
//   - Total: malformed input (nil or negative amounts) never panics; such a
//     transfer is dust and never counts.
//
// The rules, applied to each transfer on the chain, in this order:
//
//  1. Another asset than the intent's: wrong_asset, even when credited.
//  2. A malformed amount: dust, even when credited.
//  3. Credited to the intent by finance (credit_intent): it counts
//     whatever its timing, its amount or a renewal; but a payable is paid
//     at most once, so when the payable is paid by another intent or a
//     debit it is a duplicate (and the caller voids the credit).
//  4. Zero, or below the dust minimum: dust.
//  5. First seen after the deadline: late (first seen exactly at the
//     deadline counts).
//  6. Sent to an intent that was renewed: late.
//  7. The payable is paid by another intent or a balance debit: duplicate.
//  8. The part finance decided on otherwise (refunded, ignored, credited to
//     an account: Transfer.Resolved) never counts (docs/behaviour.md invariant 7).
//     A transfer decided on whole counts for nothing: it is a duplicate
//     when, counted whole, it would complete the paying set or come after
//     it (it paid for what was, or would be, paid), and partial otherwise.
//     One whose surplus was decided on counts with the rest.
//  9. Otherwise it counts. Counting transfers, in the order they were
//     recorded, form the paying set until their counted parts reach
//     Amount − Tolerance (at least 1): each settles what counts of it,
//     except the last, which settles what the amount still needed and is
//     overpaid when it moved more than that (its surplus, resolved or
//     not). Counting transfers after the set are duplicates; when the sum
//     is never reached, every counting transfer is partial and settles
//     nothing.
//  10. A transfer that left the chain (or vanished from the mempool)
//     counts for nothing and settles nothing; it is classified as it
//     would be on the chain, except that one that would pay an intent
//     that is, or once was, paid is reverted.
//
// The intent's status, the first that applies: paid when the paying set
// is complete, all of it confirmed, and the payable is neither paid by
// other means nor held behind another intent's earlier payment; reverted
// when it was paid once; superseded when it was renewed; detected when the
// paying set is complete (confirming, or held); underpaid when something
// counts and the deadline passed; detected when something counts;
// detected when, before the deadline, a payment is a duplicate only because
// the payable was paid by other means (it did not vanish); expired past
// the deadline; awaiting_payment before it.
//
// A payable's intents are decided together (DecidePayable): a debit that
// paid it makes every intent's payment a duplicate; the intent that paid it
// stays its payer while its own payment holds (docs/behaviour.md invariant 6: the
// storefront was told); otherwise the intent whose payment was completed
// first (in the order transfers were recorded or credited) pays it once
// that payment is confirmed, and until then any other complete payment
// waits behind it (held: detected, not paid).
//
// Everything except settles needs review by finance
// (Classification.NeedsReview), for the part of it that does not pay its
// intent and that no finance decision covers.
package matcher
