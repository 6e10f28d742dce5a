// Command paywatch-load measures what a large watched set costs the daemon:
// it inserts N pseudo-random Bitcoin P2WPKH addresses into a database, starts the
// real paywatch binary on it (Bitcoin enabled, no node needed: the watched
// set loads before the first node call), waits until the daemon's
// paywatch_watched_keys_loaded gauge reaches N, and prints the load time and
// the daemon's resident memory (now and peak).
//
//	go build -o bin/paywatch ./cmd/paywatch
//	go run ./cmd/paywatch-load -bin bin/paywatch -n 1000000
//
// Without -database it starts a throwaway PostgreSQL cluster of its own and
// removes it afterwards. It only talks to the loopback interface and stops by
// itself (-timeout).
package main
