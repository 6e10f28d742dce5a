package main

import (
	"strings"
	"testing"
)

func TestTableFromBenchOutput(t *testing.T) {
	in := `goos: linux
BenchmarkWatchSetContains/hit-2         	 1000000	      200.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkWatchSetContains/map-hit-2     	 1000000	      400.0 ns/op
BenchmarkWatchSetContains/miss-2        	 1000000	      100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkWatchSetContains/10M/batch-half-2        	  104478	     12351 ns/op	   5181784 lookups/s	       0 B/op	       0 allocs/op
bench load average 0.31 0.40 0.52 at start
BenchmarkStatus/200k/status-2         	     100	  2500000 ns/op	 1.75 p50-ms
BenchmarkStatus/2M/status-2         	     100	  3500000 ns/op	 3.25 p50-ms
BenchmarkStatus/2M/count(*)-per-network-2         	     100	  150000000 ns/op
BenchmarkCreateIntent/commits/callers=16-2 	3000	 100000 ns/op	 10400 commits/s	 0.5 p50-ms	 4.75 p99-ms
BenchmarkCreateIntent/BTC/callers=16-2 	3000	 400000 ns/op	 2600 intents/s	 5.5 p50-ms	 18.25 p99-ms
PASS
load average 1.00 1.00 1.00 at start, 1.00 1.00 1.00 at end
bench load average 0.50 0.45 0.41 at end
BenchmarkLatency/bitcoin/detected 30 36.2 p50-ms 49.8 p95-ms 61.0 max-ms 10000 poll-ms
BenchmarkLatency/litecoin/detected 30 2515.4 p50-ms 4902.1 p95-ms 4990.0 max-ms 5000 poll-ms
    sim_test.go:156: 600 histories of 12 steps in 16.2s: 37.0 histories/s (3 workers)
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5000000/s", "map: 2500000/s", "10000000/s", "2.50 ms", "2600/s", "18.25 ms", "0.25 × the commit-bound rate", "10400/s", "p50 0.50 ms, p99 4.75 ms",
		"mean 3.50 ms; one count(*): 150.00 ms",
		"make bench: load average 0.31 0.40 0.52 at start", "make bench: load average 0.50 0.45 0.41 at end",
		"paywatch-latency: load average 1.00 1.00 1.00 at start, 1.00 1.00 1.00 at end", "p50: 5.50 ms", "map: not run",
		"| broadcast → detected p95, bitcoin (btcd)", "| 50 ms", "p50 36 ms, max 61 ms; poll 10s, p95/poll 0.005",
		"| 4902 ms", "p50 2515 ms, max 4990 ms; poll 5s, p95/poll 0.980",
		"block → confirmation p95, ethereum (anvil)",
		"hits not run, misses not run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	// Each figure's row holds its value (the columns are padded).
	for figure, value := range map[string]string{
		"| watched-set batch lookup (64), half hits (10M keys) ": "| 5181784/s ",
		"| GET /v1/status median (200k addresses) ":              "| 1.75 ms ",
		"| GET /v1/status median (2M addresses) ":                "| 3.25 ms ",
		"| broadcast → detected p95, litecoin (litecoind) ":      "| <= 250 ms ",
		"| money simulator, 12 steps, 3 workers ":                "| 37.0 histories/s | >= 35 histories/s | 600 histories in 16.2s",
	} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, figure) {
				found = true
				if !strings.Contains(line, value) {
					t.Errorf("row %q lacks %q: %s", figure, value, line)
				}
			}
		}
		if !found {
			t.Errorf("table lacks the row %q:\n%s", figure, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "block → confirmation p95, ethereum (anvil)") && !strings.Contains(line, "| not run ") {
			t.Errorf("a latency figure missing from the input is not shown as not run: %s", line)
		}
	}
}

// TestSimRowOnlyAtTheTargetsSettings: a simulator run at other settings
// than the target's (12 steps, 3 workers) is not shown as the figure.
func TestSimRowOnlyAtTheTargetsSettings(t *testing.T) {
	for in, want := range map[string]string{
		"    sim_test.go:156: 600 histories of 40 steps in 60s: 10.0 histories/s (3 workers)": "ran 40 steps, 3 workers",
		"    sim_test.go:156: 600 histories of 12 steps in 60s: 10.0 histories/s (1 workers)": "ran 12 steps, 1 workers",
		"no simulator here": "",
	} {
		r := simRow(in)
		if r.value != "not run" || r.other != want {
			t.Errorf("%q: row %+v, want not run with %q", in, r, want)
		}
	}
}
