package addresses

import "errors"

// ErrPrivateKey is returned when an account key is a private extended key.
// paywatch is watch-only: give it the account's extended public key instead.
var ErrPrivateKey = errors.New("private extended key given: paywatch is watch-only and accepts only extended public keys (xpub/zpub/…); the key was not stored or logged")

// ErrInvalidKey is returned for an account key that is not a valid
// account-level extended public key (garbage, bad checksum, wrong length,
// wrong depth, point not on the curve).
var ErrInvalidKey = errors.New("invalid account key")

// ErrInvalidAddress is returned for an address that does not parse for the
// given network and chain.
var ErrInvalidAddress = errors.New("invalid address")

// ErrMWEB is returned for a Litecoin MWEB address (ltcmweb1…, tmweb1…):
// MWEB payments are invisible to paywatch, so such addresses are refused.
var ErrMWEB = errors.New("litecoin MWEB addresses are not supported: MWEB payments are invisible without the view key; use an ltc1… address")

// ErrNoDerivation is returned by NewDeriver for Solana, whose ed25519 keys
// have no public derivation: Solana addresses come from the imported pool.
var ErrNoDerivation = errors.New("solana has no public key derivation: solana addresses come from the imported public key pool")

// ErrUnsupported is returned for an unknown network or chain name.
var ErrUnsupported = errors.New("unsupported network or chain")

// ErrInvalidPool is returned by ParseSolanaPool for a pool file with an
// invalid line, a duplicate key, or no key at all.
var ErrInvalidPool = errors.New("invalid solana pool")

// ErrIndexOutOfRange is returned by Derive for an index above MaxIndex.
var ErrIndexOutOfRange = errors.New("derivation index out of range")
