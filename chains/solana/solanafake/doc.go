// Package solanafake is an in-memory Solana cluster that speaks agave's
// JSON-RPC 2.0 over HTTP, so that paywatch's Solana client is tested against
// the protocol rather than against itself. It is a normal package (not a
// test file) so the sandbox can serve it too.
//
// Faithful to agave (anza-xyz/agave rpc/src/rpc.rs, rpc-client-api
// custom_error.rs, transaction-status encoders; captures in
// chains/solana/testdata):
//   - methods getSlot, getBlockHeight, getBlock, getBlocks,
//     getBlocksWithLimit, getTransaction, getSignaturesForAddress,
//     getBalance, getHealth, getGenesisHash, getVersion (the genesis hash is
//     slot 0's blockhash, or Node.SetGenesisHash's); anything else is -32601
//     "Method not found"; batches (JSON arrays) answer an array;
//     notifications (no id) get no answer; unknown request members, a
//     missing "jsonrpc":"2.0" or non-string method are -32600; a body that is
//     not JSON is -32700; only POST with Content-Type application/json is
//     served (405/415 otherwise); bodies above 50 KiB are 413;
//   - getBlock honours encoding (json, base64, base58, binary),
//     transactionDetails (full, accounts, signatures, none), rewards and
//     maxSupportedTransactionVersion: a v0 transaction in a block read
//     without it is -32015 with agave's message; "accounts" lists every key
//     of AccountKeys (static, then lookup-table writable, then readonly, with
//     "source") and reduces meta to err, fee, status, balances and token
//     balances (build_simple_ui_transaction_status_meta); results print
//     their members in alphabetical order like agave (serde_json Value);
//   - commitment "processed" on getBlock, getBlocks, getBlocksWithLimit,
//     getTransaction and getSignaturesForAddress is -32602 "Method does not
//     support commitment below `confirmed`"; a slot above the tip is -32004
//     "Block not available for slot N"; a slot without a block is -32007
//     "Slot N was skipped, or missing due to ledger jump to recent snapshot";
//     getBlocks lists exactly the produced slots (a skipped slot never, a
//     slot given to Node.Lose still: the faulty node whose getBlock says
//     -32007/-32009 for a block that exists), clamps its end to the tip,
//     answers [] for end < start and
//     -32602 "Slot range too large; max 500000"; getSignaturesForAddress
//     validates limit 1..1000 and pages newest first with before/until;
//   - a websocket upgrade on the same URL is agave's pubsub service (ws.go):
//     slotSubscribe answers the subscription id (from 0) and every produced
//     slot (none for a skipped one) is a slotNotification
//     {"parent","root","slot"} with root == slot; slotUnsubscribe; other
//     methods are -32601. DropSubscriptions closes every connection;
//   - wallets pay through it as through a real cluster (exec.go,
//     rpcwallet.go, signed.go): sendTransaction (base58 or base64) decodes
//     the VersionedTransaction (legacy or v0) with agave's size limits and
//     messages, sanitizes it, verifies every ed25519 signature over the
//     serialized message (-32003 "Transaction signature verification
//     failure") and simulates it (-32002 "Transaction simulation failed:
//     <TransactionError>" with the RpcSimulateTransactionResult as data:
//     BlockhashNotFound once the blockhash is 150 blocks old,
//     AlreadyProcessed, AccountNotFound and InsufficientFundsForFee for the
//     fee payer, InsufficientFundsForRent, InstructionError with the
//     program's logs); it runs in the next slot: the System program's
//     Transfer and CreateAccount, Compute Budget (fees 5000 lamports a
//     signature plus the priority fee), spl-token's Transfer and
//     TransferChecked (TokenError codes and "Program log: Error: …" lines),
//     the Associated Token Account program's Create and CreateIdempotent
//     with their four inner instructions, spl-memo; a failed instruction
//     keeps only the fee. simulateTransaction, getLatestBlockhash,
//     isBlockhashValid, getSignatureStatuses, getFeeForMessage,
//     getMinimumBalanceForRentExemption ((len+128)×3480×2), getAccountInfo,
//     getMultipleAccounts, getTokenAccountBalance, getTokenAccountsByOwner
//     and signatureSubscribe answer as agave does; Fund, CreateMint and
//     MintTo set genesis state;
//   - "jsonParsed" prints transactions (getTransaction, getBlock) with
//     agave's parsers for System, spl-token, associated-token-account and
//     memo instructions (others partially decoded, loadedAddresses left
//     out, lookup-table keys tagged), and Token accounts and mints
//     (getAccountInfo); the shapes are checked against real captures in
//     chains/solana/testdata.
//
// Deliberate simplifications: every slot is finalized as soon as it is
// produced (confirmed == finalized == tip); PaySOL's signatures are not real
// ed25519 signatures (a wallet's are checked); -32602 texts for malformed
// parameters follow serde's shape but are not byte-exact except where agave
// raises them itself; the writable flag in "accounts" mode demotes only a
// fixed list of reserved keys; there are no address lookup tables (a v0
// message that uses one is AddressLookupTableNotFound) and no program
// besides those above (ProgramAccountNotFound); compute units are the
// programs' typical figures, not metered; a transaction that fails to load
// is not committed (agave 2.x commits some as fee-only); Reorg rewrites
// finalized slots, which a real cluster never does (it exists for the
// conformance suite).
package solanafake
