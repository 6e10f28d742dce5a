// Command paywatch-bench turns `go test -bench` output (on standard input)
// into the one table `make bench` prints: figure, value, target, and for
// ratios both sides, measured in the same run.
//
//	make bench
package main
