// Package verify is the second source for large payments (issue 33 item
// 5). An intent of at least networks.<n>.large_amount_usd is paid only once
// an endpoint of another provider than the one that served the scan (an
// endpoint of role verify, or one of role both under another name; see
// endpoints.Verify) confirms each of its confirmed transfers: the
// verifier reads the transfer's block again from that endpoint through
// the network's own chains.Source (so the decoding is the scanner's), on
// that endpoint's best chain at the transfer's height, and requires
//
//   - the same block (its hash is the one the scanner recorded: another
//     block there, or none, is "unseen");
//   - the transaction's transfer to the same destination, of the same
//     asset and amount (a different asset or amount "disagrees"; no
//     transfer of the transaction to the address is "unseen");
//   - the required depth on that endpoint: its own head at least the
//     transfer's confirmations above the block, or its own finalized
//     height at or above it for a finality-counted transfer ("pending"
//     until then, as when every such endpoint is unreachable).
//
// Only "verified" lets the transfer count as confirmed for the matcher
// (intents.Service decides with it); every other state holds the intent in
// detected, never paid. A network with no endpoint of another provider
// holds its large intents as "no_verifier". A disagreement or an unseen
// transfer is logged and counted (paywatch_verification_disagreements_total)
// and every held intent is in paywatch_verification_held_intents and the
// status; when a later check agrees (the verifier caught up, the lie
// stopped) the transfer is verified and the intent decided again: paid.
// A transfer moved to another block or given other content by the
// scanner loses its verification (store.UpsertTransfer) and is checked
// anew.
//
// Writes are conditional on the transfer still being in the block and of
// the amount that was checked, and idempotent: a check repeated, or run by
// two instances, changes nothing more. Only the leader of a network's
// scanner checks it.
package verify
