// Package addresses turns account-level extended public keys into receive
// addresses, and parses, validates and renders the addresses of the five
// networks paywatch watches.
//
// Guarantees:
//
//   - Watch-only. Only extended public keys are accepted. Any private
//     extended key (xprv, tprv, yprv, zprv, uprv, vprv, Ltpv, Mtpv, ttpv, or
//     any serialization whose key data is a private key, whatever its version
//     bytes) is rejected with ErrPrivateKey, and no error of this package
//     ever contains the key it was given.
//   - Deterministic derivation. BTC and LTC receive addresses are BIP84
//     native segwit P2WPKH (account/0/i); ETH and Tron are BIP44 secp256k1
//     (account/0/i), ETH = keccak256(uncompressed pubkey)[12:], Tron =
//     base58check(0x41 ‖ the same 20 bytes). The same key and index always
//     give the same Address; version bytes of the key (xpub, zpub, vpub,
//     Ltub, ...) do not matter, only its public key and chain code. Keys
//     must be account level (depth 3, hardened child number). Per-index
//     derivation is BIP32 CKDpub on the cached external chain key, checked
//     against btcutil/hdkeychain and the published BIP84 and Hardhat vectors.
//   - Solana has no public derivation: its addresses come from a pool of
//     on-curve ed25519 public keys imported with ParseSolanaPool.
//   - Binary watch keys. Address.Key is what scanners match on: the output
//     script for BTC/LTC (so 3… and M… forms of one Litecoin P2SH are the
//     same key), the 20-byte account for ETH and Tron, the 32-byte public
//     key for Solana. Address.String is the canonical display form (lower
//     case bech32, EIP-55 checksummed hex, T… base58check, base58).
//   - Strict parsing. Wrong checksums (bech32, base58check, mixed-case
//     EIP-55), wrong lengths, wrong network prefixes and Litecoin MWEB
//     addresses (ltcmweb1…, which paywatch can never see) are errors wrapping
//     ErrInvalidAddress or ErrMWEB, never a silent acceptance.
//   - Derivers are immutable and safe for concurrent use.
package addresses
