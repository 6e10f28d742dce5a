// Command paywatch is the payment watcher daemon and its operator CLI.
//
//	paywatch serve        run the API, the scanners, the deadline sweep and webhooks
//	paywatch migrate      apply database migrations
//	paywatch apikey       create, list and revoke API keys
//	paywatch pool import  import Solana public keys into the address pool
//	paywatch status       print per-network scanner status
//	paywatch rescan       ask a network's scanner to rescan from a height
//
// The local sandbox (nodes, simulated chains, installers, test keys) is its
// own command, cmd/paywatch-sandbox, which runs this binary's serve; this one
// links none of it (TestDaemonLinksNoSandbox).
//
// serve is a config load and daemon.New + Run: the daemon is wired in
// package daemon, as the tests and the simulator build it.
//
// main returns errors instead of exiting deep inside; SIGINT and SIGTERM
// cancel the context, and cancellation is a clean exit.
package main
