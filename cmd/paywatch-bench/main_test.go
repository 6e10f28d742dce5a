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
BenchmarkStatus/status-2         	     100	  2500000 ns/op
BenchmarkCreateIntent/BTC/callers=16-2 	3000	 400000 ns/op	 2600 intents/s	 5.5 p50-ms	 18.25 p99-ms
PASS
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5000000/s", "map: 2500000/s", "10000000/s", "2.50 ms", "2600/s", "18.25 ms", "p50: 5.50 ms", "map: not run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
