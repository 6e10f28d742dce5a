package main

import (
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 20; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.50, 10 * time.Millisecond}, {0.95, 19 * time.Millisecond}, {1, 20 * time.Millisecond}} {
		if got := percentile(s, c.p); got != c.want {
			t.Errorf("p%.0f of 1..20 ms = %s, want %s", c.p*100, got, c.want)
		}
	}
	if got := percentile(s[:1], 0.95); got != time.Millisecond {
		t.Errorf("p95 of one sample = %s, want it", got)
	}
}

// TestReportLinesForBench: the lines cmd/paywatch-bench reads (name, n,
// then value-unit pairs), from unsorted samples.
func TestReportLinesForBench(t *testing.T) {
	var out strings.Builder
	report(&out, []result{{network: payment.Litecoin, figure: figDetected, poll: 5 * time.Second,
		samples: []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}}}, "1 1 1", "2 2 2", nil)
	for _, want := range []string{
		"BenchmarkLatency/litecoin/detected 3 200.0 p50-ms 300.0 p95-ms 300.0 max-ms 5000 poll-ms\n",
		"load average 1 1 1 at start, 2 2 2 at end",
		"litecoin  broadcast -> detected",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
