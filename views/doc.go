// Package views renders stored records (intents, transfers, ledger
// entries, events) as the API, the webhooks, the event feed and the console
// show them. It changes when the shape of an answer changes, and for no
// other reason.
//
// Guarantees:
//   - Pure: every function is a function of its arguments (a record and the
//     network's node height); no I/O, no clock.
//   - Exact: amounts are rendered from integer base units and cents
//     (payment.FormatUnits, payment.Cents); a USD value is rounded down, so
//     what was received is never overstated.
//   - Stable: an event body and an idempotent replay are these views
//     marshalled as JSON, so a field's name or meaning never changes
//     silently.
package views
