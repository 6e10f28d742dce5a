// Package ingest is where the chains' observations enter paywatch: it is
// every role a chains.Scanner writes to (the cursor, blocks, tips,
// rewinds, the mempool, health, balance checks) and the refresher of the
// scanners' watched sets (Keys). It changes when what a scanner reports, or
// how it is stored, changes; what a transfer means is decided by the
// intents package (Decider) and what finance's credits do by finance
// (CreditFollower), both in ingest's transaction.
//
// Guarantees:
//   - A block (or a batch of consecutive blocks), a tip, a rewind or a
//     mempool read is applied in one transaction: the transfers to our
//     addresses, their confirmations, the decisions of every intent touched,
//     the ledger entries, the events and the cursor. Side effects (metrics,
//     logs of what was written) run after commit.
//   - A block applies only when it extends the stored cursor
//     (ErrCursorMoved otherwise), and every write is idempotent on the
//     transfer's natural key, so a replay or a rescan changes nothing.
//   - A transfer to a key that is not one of our addresses fails the step;
//     it is never recorded.
//   - A balance-check item is recorded once per (height, address)
//     (BalanceTxID, BalanceIndex).
//   - Keys reads new addresses by their commit-ordered seq, so no address
//     committed late or by another instance is missed; a scanner step reads
//     them with its cursor in one round trip (Keys.RefreshCursor), before
//     the node's tip.
//   - The scanner runs only under its network's lease (Leader), and every
//     write of a Leader's scanner carries the lease's fence (Sink.Fenced):
//     checked in the write's own transaction, so a leader that froze and
//     woke after a takeover writes nothing.
package ingest
