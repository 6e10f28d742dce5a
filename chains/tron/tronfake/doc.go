// Package tronfake is an in-memory Tron full node that speaks java-tron's
// HTTP API, for tests and the local sandbox (no real Tron node runs here).
//
// Endpoints (GET or POST, under /wallet and /walletsolidity): getnowblock,
// getblockbynum, getblockbylimitnext, gettransactioninfobyblocknum,
// gettransactionbyid, gettransactioninfobyid, getblock, getaccount,
// triggerconstantcontract; under /wallet only: createtransaction,
// triggersmartcontract, broadcasttransaction, broadcasthex, getcontract.
//
// Guarantees:
//   - Responses have the real node's shapes (taken from mainnet captures):
//     sorted keys, visible=false hex addresses with the 41 prefix, blockID,
//     raw_data, raw_data_hex, ret[].contractRet, TransactionInfo receipt and
//     log[] with 20-byte addresses without 41, internal_transactions[]
//     (CallContract, PayInternalTRX) with callValueInfo [{callValue}] or
//     [{tokenId, callValue}] and rejected only when true; a reverted call's
//     internal transactions are all rejected. An empty block has no
//     "transactions" key. Captured blocks (AddCaptured) are served byte for byte.
//   - txID = sha256(protobuf raw_data) and blockID = number ‖ sha256(header
//     raw)[8:], both computed exactly as java-tron does (verified on real
//     blocks in the tests); txTrieRoot and the signatures of the
//     PayTRX/PayTRC20 shortcuts are deterministic stand-ins, not real Merkle
//     roots or ECDSA signatures (a wallet's signatures are real and checked).
//   - It rejects what java-tron rejects: unknown paths get Jetty's 404 page,
//     methods other than GET/POST/HEAD 405, a malformed body or parameter the
//     HTTP-200 {"Error": "class … : …"} shape; a missing num is 0 (the genesis
//     block), a negative or absent block is {}; getblockbylimitnext answers {}
//     when endNum ≤ startNum or endNum-startNum > 100; transaction infos for
//     num ≤ 0 are {} and for an absent block [].
//   - /walletsolidity/* serves the chain up to the solidified block (head −
//     SetSolidifiedLag, default 19); Reorg never touches it.
//   - FailNext injects the failures seen in production: an Error body, the
//     "lack of computing resources" limiter, a lite full node's plain text,
//     HTTP 429 and 500, a truncated body, a hung request.
//   - ControlHandler (a separate handler, never mixed into the API) lets the
//     sandbox pay, mine, reorg and inject failures over HTTP; Produce mines on
//     a timer like the real 3-second slots.
//   - visible=true is refused with an Error body rather than answered wrongly.
//   - Wallets pay through it as through java-tron (txcodec.go, wallet.go,
//     walletapi.go): createtransaction and triggersmartcontract build the
//     unsigned transaction on the head block (ref_block_bytes/hash,
//     expiration 60 s after it, wall-clock timestamp, raw_data_hex its exact
//     protobuf, so TronWeb's re-encoding check passes); broadcasttransaction
//     packs the posted raw_data back into protobuf as Util.packTransaction
//     does (raw_data_hex and txID are not trusted) and broadcasthex takes
//     the protobuf; then, in Wallet.broadcastTransaction's order, the
//     expiration, the secp256k1 signature recovered over sha256(raw_data)
//     (SIGERROR "… is signed by T… but it is not contained of permission."),
//     TAPOS against the recent blocks (TAPOS_ERROR), expiration against the
//     head (TRANSACTION_EXPIRATION_ERROR), duplicates
//     (DUP_TRANSACTION_ERROR), bandwidth (600 free bytes a day, then 1000
//     sun a byte; 0.1 TRX to create an account), and the contract
//     (CONTRACT_VALIDATE_ERROR with TransferActuator's messages) are
//     checked; messages are hex as with visible=false. An accepted
//     transaction changes the accounts at once (/wallet reads), appears in
//     the next block with its signature, and its TransactionInfo carries
//     fee, net_usage or net_fee, energy_usage_total and energy_fee (100 sun
//     an energy unit; a USDT transfer costs 14631, or 29631 to a new
//     holder). getaccount, triggerconstantcontract and getblock of
//     /walletsolidity read the state at the solidified block.
//   - Accounts exist only through Fund (genesis credit) and transfers; a
//     TRC-20 token exists through AddTRC20 (ABI for getcontract, balances,
//     transfer/balanceOf/decimals/symbol/name/totalSupply; other calls
//     revert) and MintTRC20. PayTRX, PayTRC20 and CallContract, the tests'
//     shortcuts, leave the accounts alone. A reorg undoes what the removed
//     blocks' wallet transactions changed.
package tronfake
