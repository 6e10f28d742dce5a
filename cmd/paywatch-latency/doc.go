// Command paywatch-latency measures how soon a payment shows in the API at
// the daemon's default poll intervals, against real nodes: it starts a
// throwaway PostgreSQL, btcd, litecoind and anvil (package devnet), runs the
// real paywatch binary on them with every poll interval left at its default,
// and for each network takes N samples of
//
//   - broadcast → detected: from the broadcast call (btcd sendrawtransaction
//     of a faucet payment, litecoind's wallet sendtoaddress, anvil
//     eth_sendTransaction) until the intent's intent.detected event arrives
//     on a long-poll of GET /v1/events?type=intent.detected&wait=30s, which
//     the API answers on the PostgreSQL NOTIFY of the commit;
//   - block → confirmation: from the mining call (btcd generate 1,
//     litecoind generatetoaddress 1, anvil_mine 1) until GET
//     /v1/intents/{id} shows the transfer's confirmations one higher,
//     polled every -poll-every (10 ms by default, a few percent of what is
//     measured).
//
// It prints p50, p95 and max per network and figure next to the network's
// poll interval, as text and as benchmark-style lines that
// cmd/paywatch-bench turns into `make bench` rows:
//
//	go build -o bin/paywatch ./cmd/paywatch
//	go run ./cmd/paywatch-latency -bin bin/paywatch -n 30
//
// Samples are taken one at a time, network after network, each after a
// random pause below one second so that they do not lock to a poll timer's
// phase. Everything listens on loopback only, under a temporary directory
// that is removed afterwards; the program stops by itself (-timeout).
package main
