// Command paywatch-sandbox runs the local sandbox that `make run` starts:
// PostgreSQL, btcd and litecoind on regtest, anvil with two test tokens,
// simulated Tron and Solana nodes, and the paywatch daemon itself — the
// paywatch binary beside this one, run as `paywatch serve` on the sandbox's
// config, so the sandbox exercises exactly what an operator runs.
//
//	paywatch-sandbox [--dir DIR] [--listen ADDR] [--deadline D]   start it (Ctrl-C stops it)
//	paywatch-sandbox pay <intent-id> [--amount X]                 pay a sandbox intent from the sandbox's coins
//
// The simulated nodes start with two funded test wallets (wallets.go): a
// Tron key (anvil's dev account 9) and a Solana keypair (m/44'/501'/0'/0'
// of the test mnemonic), written to sandbox.env and solana-wallet.json and
// printed, so that TronWeb, @solana/web3.js or a wallet app pays intents as
// a customer would; pay signs with them through the nodes' public APIs.
// Their keys are public knowledge and never reach the daemon.
//
// SANDBOX ONLY: it installs missing peers, stops processes it left running,
// uses the public test mnemonic's keys and, after a restart replaced a
// throwaway chain, forgets that network's scan state (store.Tx.ForgetScanState).
// None of it is linked into the daemon (cmd/paywatch's TestDaemonLinksNoSandbox).
package main
