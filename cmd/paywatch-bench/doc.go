// Command paywatch-bench turns `go test -bench` output (on standard input)
// into the one table `make bench` prints: figure, value, target, and for
// ratios both sides, measured in the same run. It also reads the
// BenchmarkLatency lines of cmd/paywatch-latency (p50/p95/max in ms and
// the poll interval) and shows each p95 against the 1 s target.
//
//	make bench
package main
