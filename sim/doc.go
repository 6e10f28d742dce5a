// Package sim is a deterministic simulation test of the whole money path,
// in the spirit of TigerBeetle's VOPR and FoundationDB's simulation: one
// seed generates a history (intents created, renewed, reported, swept;
// transfers broadcast, evicted, replaced, mined with lagging or leading
// block times, reorged out, re-ordered or kept; node lag, fetch errors,
// outages, skipped slots; balance debits, concurrent ones too; finance
// decisions valid and invalid; rescans valid and invalid; scanner and
// service restarts, a commit killed inside a batch transaction, and round
// trips: blocks taken away and the same transactions mined back), each
// under a config of its own drawn at the edges of validation, and
// runs it against the real Service, scanners and API handlers over
// scripted chains (chains/chainstest.Fake), an injected clock and real
// PostgreSQL. The invariants of docs/behaviour.md, and those of issues 9 and 21,
// are checked after every step (Invariants lists them), every event body
// right after the commit that wrote it (store OnCommit), and every history
// ends with a rebuild: every decision forgotten, every chain scanned again
// from its first height, the same books. A violation prints the seed, the
// command that replays it and the history's trace, shrunk to the steps
// that still fail.
//
// The same seed gives the same history: the chains are scripted, time is
// the injected clock, nothing sleeps, and the scanners run one step at a
// time under the simulator's control (their tip is capped at cursor +
// parallel, so no window is prefetched in the background while the chain
// changes). Only the two concurrent debits of a "debit pair" race for
// real; the invariants hold whichever wins.
//
// Files, one job each: gen.go draws a history from a seed and configs.go
// its config; world.go is one worker's paywatch and its scripted nodes;
// run.go executes a history step by step; storefront.go, finance.go,
// chain.go, roundtrip.go and lose.go are the actions (API requests,
// finance decisions and debits, payments, reorgs and node faults, round
// trips and rebuilds, a lost write); check.go, books.go, bodies.go and
// parts.go are the invariants and what they read. stores.go and
// storecheck.go run every history with two stores (issue 34) and check
// that nothing crosses between them.
package sim
