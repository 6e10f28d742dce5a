// Package tron reads TRX and USDT TRC-20 payments from a java-tron node (or
// TronGrid) over its HTTP API, with net/http and encoding/json only.
//
// Blocks come from /wallet/getblockbynum (or /wallet/getblockbylimitnext in
// batches); the head from /wallet/getnowblock and the irreversible height
// from /walletsolidity/getnowblock. Receipts (/wallet/gettransactioninfobyblocknum)
// are fetched only for blocks in which a contract ran.
//
// Guarantees:
//   - Matching is on the 20-byte account, never on an address string. Keys
//     handed to chains.Watched are 20 bytes; Transfer.Address is base58check T….
//   - TRX: a TransferContract whose ret[0].contractRet is SUCCESS, amount in
//     sun, Index chains.NativeIndex. TRC-10 (TransferAssetContract) is ignored.
//   - USDT: a Transfer(address,address,uint256) log of the configured contract
//     (three topics) in a transaction that succeeded (ret SUCCESS, no FAILED
//     result, receipt.result SUCCESS when present); Index is the log's position
//     in the transaction's log list. Zero-value transfers are reported with
//     amount 0 for the matcher to classify; look-alike contracts never match.
//   - Internal TRX: TRX a contract sent to a watched account while a
//     transaction ran, read from the TransactionInfo's internal_transactions
//     (no extra call: infos are fetched for contract blocks anyway), like the
//     evm source's traced internal ETH transfers. Only in a transaction that
//     succeeded (same check as USDT), only entries not rejected, only
//     callValueInfo entries without tokenId (TRX, not TRC-10) and with
//     callValue > 0, matched on transferTo_address's 20-byte account; Asset
//     native, amount in sun (exact integer), Index -2 - k for the k-th
//     internal transaction, so it never collides with the transaction's own
//     TRX (chains.NativeIndex) or its logs (≥ 0).
//   - A failed or reverted transaction is never reported.
//   - Errors name the height or txid. Throttling, 429/403/5xx, timeouts and a
//     block/receipt mismatch across a head change wrap ErrTransient; a body that
//     does not parse or contradicts the request wraps chains.ErrInvalidResponse;
//     a block above the head is chains.ErrBlockNotFound. No height is skipped.
//   - The API key travels only in the TRON-PRO-API-KEY header; it is never
//     logged nor included in an error.
package tron
