// Package nodes builds the node client (a chains.Source) of each network as
// its configuration names it: Bitcoin and Litecoin over JSON-RPC (with ZMQ
// or websocket notifications), Ethereum with its tokens and trace mode,
// Tron with its API key and USDT contract, Solana with its scan mode.
//
// The daemon takes this constructor in daemon.Deps rather than importing
// it, so a test binary that builds the daemon over scripted chains links
// none of the node clients (go-ethereum's and ltcd's cgo secp256k1 may not
// share a binary).
package nodes
