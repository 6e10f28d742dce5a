// Package store is paywatch's only state: PostgreSQL through pgx/v5.
//
// Guarantees:
//   - Migrations are numbered SQL files embedded in the binary, applied in
//     order under an advisory lock, each in its own transaction; applying them
//     twice, or from several instances at once, is harmless.
//   - The schema holds the invariants of docs/behaviour.md as constraints: one address
//     per intent and network, one transfer per natural key (network, txid,
//     index), at most one paid intent per payable, non-negative amounts and
//     balances, checked status values, one resolution per transfer.
//   - Every write is idempotent on a natural key. Time-dependent queries take
//     `now` as a parameter; nothing reads the database clock for decisions.
//   - pgx errors are translated (ErrNotFound, ErrConflict) so nothing above
//     this package imports pgx. Serialization failures and deadlocks are
//     retried by InTx.
//   - Event rows are appended under a transaction-scoped advisory lock taken
//     just before commit, so event seq order is commit order and a reader
//     that follows seq never misses an event. Watched addresses get their
//     seq the same way (under their own advisory lock, held to commit), so a scanner
//     that refreshes by seq (WatchedKeysSince) never misses an address
//     committed late or stamped by a skewed clock. That lock is taken once
//     per statement, before the statement draws its first seq.
//   - At most ActiveTransactions InTx transactions run at once; the others
//     wait in the process, not inside PostgreSQL.
//   - A transaction costs as few round trips as its statements allow: BEGIN
//     goes with the first statement, and Queue* writes go, in call order,
//     with the next statement or with COMMIT. A queued event
//     (QueueAppendEvent) is held back to the COMMIT whatever follows it, so
//     the event lock is held for no round trip; events queued one after
//     the other go in one statement (paywatch_append_typed_events), in
//     call order. A queued write's error is reported by the call that
//     sends it. A lease try or takeover (TryLease) is one statement
//     (paywatch_try_lease), and the readers a start uses (CountAddressesAll,
//     FreeDerivedEach, ShopsAndKeys) read all networks or tables in one.
//     Reads that go together are one batch: a scanner step's cursor and
//     new keys (CursorAndKeysSince), a block batch's writes with the
//     addresses it pays or its promotions (StartBlocksWith), an intent's
//     or a transfer's view with the node height (IntentView,
//     TransferView), a payable's locked intents with their transfers.
//     Options.Trace sees every round trip, for tests that count them.
//   - Background work (the shared LISTEN connections) belongs to Run's
//     context, or ends with Close; a lease's renewer ends with the context it
//     was taken with. Nothing here outlives its owner.
//   - Webhook deliveries are claimed (a token and an expiry) and recorded in
//     separate transactions, so no transaction is open while a sender POSTs.
//   - Across a failover (failover.go): only read-write servers are used
//     (several hosts in the URL find the primary); connections have TCP
//     keepalives, a TCP user timeout and connect and statement timeouts;
//     Run's probe declares a server that stops answering lost and closes
//     every connection at once; InTx retries a transaction lost with its
//     server once a read-write server answers (Options.RetryFor), relying
//     on every write being idempotent, then fails with ErrUnavailable.
//     IsUnavailable tells such failures from the caller's mistakes.
package store
