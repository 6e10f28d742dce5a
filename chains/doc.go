// Package chains holds what every network has in common: block references,
// transfers to watched addresses, the Source interface a network client
// implements, the in-memory watched set, and the chain-neutral Scanner that
// turns a Source into durable, reorg-safe, exactly-once transfer records.
//
// Guarantees: a Source never skips a height silently (a block it cannot read
// is an error, a slot with no block is ErrSkipped); a Block always carries its
// own hash and its parent's, so the scanner can detect a reorg; transfers are
// matched on binary keys (output script, 20-byte account, 32-byte public key),
// never on address strings.
package chains
