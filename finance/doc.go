// Package finance owns what finance decides and what accounts hold: the
// inbox of transfers that need a decision, their resolution (credit_intent,
// credit_account, refunded, ignore), account balances, the ledger, balance
// debits, and account credits that follow their transfer on the chain. It
// changes when finance's rules change; what an intent's transfers mean is
// the matcher's and the intents package's (Redecider), which finance asks
// again after every decision.
//
// Guarantees:
//   - A resolution is recorded at most once per transfer, with its effects
//     (a credit, a re-decided intent) and a transfer.resolved event, in one
//     transaction; finance decides only on money that is on the chain
//     (confirmed, not orphaned).
//   - A credit_account credit stands exactly while its transfer is
//     confirmed: reversed by a compensating entry when the transfer leaves
//     the chain, credited again (and what could not be taken back
//     recovered) when it returns; entries are never deleted.
//   - A debit never takes more than the available balance, never pays an
//     order twice (a repeated debit of a paid order returns the first one),
//     and is refused while a crypto payment covering the order waits for
//     its confirmations.
//   - Every command answers a result or a typed *intents.Error, and a
//     repeated Idempotency-Key gets its first answer.
package finance
