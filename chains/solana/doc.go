// Package solana is paywatch's watch-only Solana source: native SOL
// credits to watched 32-byte public keys, read at "finalized" commitment (no
// reorgs below it), in one of two modes.
//
// Block mode (chains.Source): Tip and FinalizedHeight are getSlot
// {"commitment":"finalized"}; Block(slot) is getBlock(slot,
// {"commitment":"finalized","encoding":"json","maxSupportedTransactionVersion":0,
// "rewards":false,"transactionDetails":"accounts"}). In accounts mode agave
// sends each transaction's signatures and its full annotated account list
// (static keys, then lookup-table writable, then readonly keys, tagged
// "source") with a meta reduced to err, fee, status and balances; it ignores
// the encoding after validating it. The decoder also reads "json"/full
// transactions, where the lookup-table keys come from meta.loadedAddresses
// and are appended in the same order; the key list must be exactly as long
// as the balance arrays or the answer is invalid. Hash is the blockhash,
// Parent the previousBlockhash (the parent is parentSlot, which may be
// several slots back when slots were skipped), Time the blockTime (zero when
// null). Slots(from, to) lists the slots that hold a block (getBlocks; skipped
// slots are absent), in calls of at most MaxSlotRange.
//
// Address mode (Poll, for small watched sets; Mode tells which applies):
// getSignaturesForAddress(addr, {"until":last seen,"limit":1000,
// "commitment":"finalized"}) paging with "before", then getTransaction(sig,
// {"encoding":"json","maxSupportedTransactionVersion":0,
// "commitment":"finalized"}) for each successful signature.
//
// Detection rule, both modes: for each transaction whose meta.err is null,
// every watched account whose postBalances[i] exceeds preBalances[i] is
// credited the difference in lamports (Transfer.Index = i, TxID = first
// signature, Asset payment.Native). This also counts CPI credits and account
// closes into a watched key. Failed transactions are never counted.
//
// Errors: -32007 and -32009 (skipped, or missing in long-term storage) are
// chains.ErrSkipped only once getBlocks over the slot confirms it holds no
// block; a slot getBlocks lists is ErrFaultySkip (transient: retried, the
// network reported unhealthy, the slot never skipped); -32004 above the finalized slot is
// chains.ErrBlockNotFound, otherwise -32004, -32014, -32019, HTTP 429 and
// 5xx, timeouts and broken connections wrap ErrTransient; -32015 is
// ErrUnsupportedVersion (cannot happen while maxSupportedTransactionVersion
// is sent); -32001 is ErrCleanedUp; anything that does not parse wraps
// chains.ErrInvalidResponse naming the slot, signature or address. Node
// errors carry an *RPCError or *HTTPError.
//
// solana-go: the JSON-RPC transport is solana-go's rpc.Client
// (RPCCallWithCallback: request framing, ids, headers, our *http.Client), its
// option constants, PublicKey/Signature base58 types and
// rpc.TransactionSignature for getSignaturesForAddress. Response bodies are
// decoded here, not by solana-go, because solana-go cannot decode
// transactionDetails "accounts" (it models "full" only), refuses the "json"
// encoding in GetBlockWithOpts/GetTransaction, and folds HTTP and decode
// failures into untyped errors that could not be classified. getSlot,
// getBlocks and getSignaturesForAddress use encoding/json; getBlock and
// getTransaction bodies (megabytes) go through a single-pass scanner
// (scan.go) that validates the whole JSON grammar, keeps keys and signatures
// as sub-slices of the body and decodes to 32 bytes only the accounts whose
// balance rose. Tests check it against an encoding/json oracle
// (FuzzDecoderAgreement).
//
// Notify (notify.go) wakes the scanner from slotSubscribe on the pubsub
// websocket (Config.NotifyURL, else the RPC URL as ws/wss) whenever the
// notified root advances; polling stays the floor.
package solana
