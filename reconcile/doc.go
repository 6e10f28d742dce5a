// Package reconcile checks, rather than believes, that every transfer to one
// of our addresses was recorded (issue 27). In the manner of rosetta's
// reconciler it asks the node for its own view of our addresses over block
// ranges the scanner has already scanned, and compares it with what paywatch
// recorded:
//
//   - Bitcoin, Litecoin, Ethereum, Tron (BlockView): the blocks of the range
//     are read again through the network's chains.Source (getblock for
//     Bitcoin/Litecoin, the block and its logs for Ethereum, the block and
//     its transaction infos for Tron) and reduced to the transfers to every
//     watched key, exactly as the scanner would; the decoders are the
//     scanner's, the answers are the node's of now.
//   - Solana (SignatureView): a sample of our addresses is listed with
//     getSignaturesForAddress at finalized commitment and each transaction
//     read, and the credits in the range kept.
//
// A difference is a Finding (store, table reconcile_findings): missing (the
// node shows a transfer we did not record), unexpected (we recorded one
// the node does not show), mismatch (both, different), node_error (the node
// failed or answered inconsistently: never a silent skip). A missing or
// mismatched transfer requests the existing, idempotent rescan from its
// height (store.RequestRescan); every transfer difference is checked again
// once the scanner has passed it (an unexpected one at once: a rescan
// cannot add what the node does not show, and the scanner orphans a
// transfer whose block left the chain itself): resolved when the node's
// view and ours agree then, open for the operator with the node's answer
// and ours when they do not.
//
// Cost is bounded: each network has its own call budget (Config.RatePerSecond
// calls a second at most, on top of the scanner's), a run reads at most
// Config.MaxBlocks blocks (the blocks scanned since the last run, and at
// least the last Config.Blocks), and a per-address view lists only
// Config.Sample addresses (plus those that received something in the range).
// Runs happen on a robfig/cron schedule (Config.Schedule, default hourly),
// on demand (store.RequestReconcile: the CLI and the operator API), and
// their progress and last run are in table reconcile_runs.
package reconcile
