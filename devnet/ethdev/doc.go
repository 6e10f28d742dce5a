// Package ethdev starts anvil, the local Ethereum dev node, for tests and
// the sandbox (StartAnvil, FindAnvil, InstallAnvil), and deploys, mints and
// sends the test tokens from its funded dev accounts. It is apart from
// devnet because it links go-ethereum's client, whose cgo secp256k1 clashes
// with ltcd's: devnet (PostgreSQL, btcd, litecoind) stays free of it, so the
// Bitcoin and Litecoin tests build with plain flags.
package ethdev
