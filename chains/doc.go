// Package chains holds what every network has in common: block references,
// transfers to watched addresses, the Source interface a network client
// implements, the in-memory watched set, the chain-neutral Scanner that
// turns a Source into durable, reorg-safe, exactly-once transfer records,
// and the notifications that wake it: KeepNotified, and WSFeed, the one
// websocket loop (dial, subscribe, keep alive, read, wake) of every chain
// whose node pushes JSON-RPC notifications (btcd, Ethereum, Solana).
//
// Guarantees: a Source never skips a height silently (a block it cannot read
// is an error, a slot with no block is ErrSkipped); a Block always carries its
// own hash and its parent's, so the scanner can detect a reorg; transfers are
// matched on binary keys (output script, 20-byte account, 32-byte public key),
// never on address strings. A scanner given the configured chain
// (ScannerConfig.Chain) over a ChainVerifier asks the node which chain it
// runs before it places a cursor and at least once per poll interval; a
// node on another chain (ErrWrongChain) is critical and scans nothing.
package chains
