// Package tronfake is an in-memory Tron full node that speaks java-tron's
// HTTP API, for tests and the local sandbox (no real Tron node runs here).
//
// Endpoints (GET or POST, under /wallet and /walletsolidity): getnowblock,
// getblockbynum, getblockbylimitnext, gettransactioninfobyblocknum,
// gettransactionbyid, gettransactioninfobyid.
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
//     blocks in the tests); txTrieRoot and signatures are deterministic
//     stand-ins, not real Merkle roots or ECDSA signatures.
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
package tronfake
