// Package evm is the Ethereum source of paywatch: native ETH, and the ERC-20
// tokens (USDT, USDC) whose contracts the operator configures, read from any
// JSON-RPC node (geth, Erigon, Nethermind, Reth, anvil, a provider).
//
// Per block it makes a fixed number of JSON-RPC calls, independent of how
// many addresses are watched: eth_getBlockByNumber(h, true), then one batch
// bound to that block's hash with eth_getBlockReceipts, eth_getLogs
// ({blockHash, address: configured contracts, topics: [[Transfer]]}) and,
// in trace mode, debug_traceBlockByHash with the callTracer. Watched
// addresses are never sent to the node; recipients are matched locally on the
// 20-byte address.
//
// Guarantees:
//   - a transfer is reported only when its transaction succeeded (receipt
//     status 1); reverted transactions never count, for ETH or tokens;
//   - a token transfer counts only when the log was emitted by a configured
//     contract (a look-alike token with the same symbol never counts) and has
//     exactly three topics; zero-value transfers (address poisoning) are
//     reported with Amount 0 for the matcher to classify;
//   - in trace mode, internal ETH is every successful CALL with value and
//     every SELFDESTRUCT (its balance goes to the beneficiary, whether or not
//     the contract is destroyed after Cancun) at any depth of the call tree;
//     a frame that failed moved nothing, nor did anything below it;
//   - native transfers use chains.NativeIndex, token transfers their log's
//     position among its transaction's receipt logs (not the block log
//     index, which moves when the transaction is mined again elsewhere:
//     issue 32 item 1), internal transfers found by tracing -2-n (n: the call's
//     depth-first position inside its transaction among the first 8 levels,
//     deeper frames numbered after those), so natural keys are unique and
//     stable, also across the change that started walking deeper than 8;
//   - every answer is checked against the block it belongs to (hash, number,
//     transaction list); a response that does not parse or contradicts itself
//     is an error wrapping chains.ErrInvalidResponse naming the height, never
//     a panic or a silent skip; a height above the tip is
//     chains.ErrBlockNotFound.
//
// Without tracing (TraceMode "balance_check"), ETH sent to a watched address
// by a contract is not in the block's transactions; the client is then a
// chains.BalanceChecker, and NativeBalances (eth_getBalance pinned to the
// stored block hash) lets the scanner turn any unexplained difference on an
// open intent's address into a finance item.
package evm
