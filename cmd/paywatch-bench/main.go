package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paywatch-bench:", err)
		os.Exit(1)
	}
}

// results maps a benchmark name (without the -GOMAXPROCS suffix) to its
// metrics by unit ("ns/op", "allocs/op", "intents/s", ...).
type results map[string]map[string]float64

func parse(r io.Reader) (results, error) {
	out := results{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			m[f[i+1]] = v
		}
		out[name] = m
	}
	return out, sc.Err()
}

type row struct{ figure, value, target, other string }

// loadLines are the lines of the bench output that give the machine's load
// average ("bench load average ..." from the Makefile, "load average ..."
// from paywatch-latency), printed beside the table: the figures of a
// shared machine mean something only with its load.
func loadLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "bench load average "):
			out = append(out, "make bench: "+strings.TrimPrefix(l, "bench "))
		case strings.HasPrefix(l, "load average "):
			out = append(out, "paywatch-latency: "+l)
		}
	}
	return out, sc.Err()
}

func run(in io.Reader, w io.Writer) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	res, err := parse(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	loads, err := loadLines(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	get := func(name, unit string) (float64, bool) {
		v, ok := res[name][unit]
		return v, ok
	}
	perSec := func(name string) string {
		ns, ok := get(name, "ns/op")
		if !ok || ns == 0 {
			return "not run"
		}
		return fmt.Sprintf("%.0f/s", 1e9/ns)
	}
	ms := func(name, unit string) string {
		v, ok := get(name, unit)
		if !ok {
			return "not run"
		}
		if unit == "ns/op" {
			v /= 1e6
		}
		return fmt.Sprintf("%.2f ms", v)
	}
	num := func(name, unit, format string) string {
		v, ok := get(name, unit)
		if !ok {
			return "not run"
		}
		return fmt.Sprintf(format, v)
	}
	ws := "BenchmarkWatchSetContains/"
	ci := "BenchmarkCreateIntent/BTC/callers=16"
	cb := "BenchmarkCreateIntent/commits/callers=16"
	ratio := "not run"
	if c, ok := get(ci, "intents/s"); ok {
		if l, ok := get(cb, "commits/s"); ok && l > 0 {
			ratio = fmt.Sprintf("%.2f × the commit-bound rate", c/l)
		}
	}
	status := func(size string) row {
		st := "BenchmarkStatus/" + size + "/"
		return row{"GET /v1/status median (" + size + " addresses)", ms(st+"status", "p50-ms"), "<= 10 ms",
			"mean " + ms(st+"status", "ns/op") + "; one count(*): " + ms(st+"count(*)-per-network", "ns/op")}
	}
	rows := []row{
		{"watched-set lookup, hit (1M keys)", perSec(ws + "hit"), ">= 5000000/s", "map: " + perSec(ws+"map-hit")},
		{"watched-set lookup, miss (1M keys)", perSec(ws + "miss"), ">= 5000000/s", "map: " + perSec(ws+"map-miss")},
		{"watched-set lookup allocations", num(ws+"miss", "allocs/op", "%.0f/op"), "0/op", ""},
		{"watched-set lookup, half hits (10M keys)", num(ws+"10M/half", "lookups/s", "%.0f/s"), ">= 5000000/s",
			"hits " + num(ws+"10M/hit", "lookups/s", "%.0f/s") + ", misses " + num(ws+"10M/miss", "lookups/s", "%.0f/s")},
		{"watched-set batch lookup (64), half hits (10M keys)", num(ws+"10M/batch-half", "lookups/s", "%.0f/s"), ">= 5000000/s",
			"hits " + num(ws+"10M/batch-hit", "lookups/s", "%.0f/s") + ", misses " + num(ws+"10M/batch-miss", "lookups/s", "%.0f/s")},
		status("200k"),
		status("2M"),
		{"commit-bound rate, 16 callers (one small commit a call)", num(cb, "commits/s", "%.0f/s"), "",
			"p50 " + ms(cb, "p50-ms") + ", p99 " + ms(cb, "p99-ms")},
		{"intent creation, 16 callers", num(ci, "intents/s", "%.0f/s"), ">= 2500/s", ratio},
		{"intent creation p99, 16 callers", ms(ci, "p99-ms"), "< 20 ms", "p50: " + ms(ci, "p50-ms")},
	}
	rows = append(rows, latencyRows(res)...)
	rows = append(rows, simRow(string(raw)))
	width := [4]int{len("figure"), len("value"), len("target"), len("other side (same run)")}
	for _, r := range rows {
		for i, v := range []string{r.figure, r.value, r.target, r.other} {
			width[i] = max(width[i], utf8.RuneCountInString(v))
		}
	}
	line := func(cells ...string) {
		for i, c := range cells {
			fmt.Fprintf(w, "| %s%s ", c, strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
		}
		fmt.Fprintln(w, "|")
	}
	for _, l := range loads {
		fmt.Fprintln(w, l)
	}
	line("figure", "value", "target", "other side (same run)")
	for i := range width {
		fmt.Fprintf(w, "|%s", strings.Repeat("-", width[i]+2))
	}
	fmt.Fprintln(w, "|")
	for _, r := range rows {
		line(r.figure, r.value, r.target, r.other)
	}
	return nil
}

// simLine is the simulator's closing log line (sim.TestSim).
var simLine = regexp.MustCompile(`(\d+) histories of (\d+) steps in (\S+): ([0-9.]+) histories/s \((\d+) workers\)`)

// simTarget is issue 37's for the simulator at 12 steps and 3 workers.
const simTarget = 35

// simRow is the money simulator's speed: histories a second with every
// invariant checked after every step.
func simRow(raw string) row {
	name := "money simulator, 12 steps, 3 workers"
	target := fmt.Sprintf(">= %d histories/s", simTarget)
	m := simLine.FindStringSubmatch(raw)
	if m == nil {
		return row{name, "not run", target, ""}
	}
	if m[2] != "12" || m[5] != "3" {
		return row{name, "not run", target, fmt.Sprintf("ran %s steps, %s workers", m[2], m[5])}
	}
	return row{name, m[4] + " histories/s", target, fmt.Sprintf("%s histories in %s, every invariant after every step", m[1], m[3])}
}

// latencyTarget is issue 11's target for both latency figures, p95.
const latencyTarget = time.Second

// litecoinDetectedTarget is issue 37's for Litecoin's broadcast → detected
// against litecoind without ZMQ (its mempool peek), p95.
const litecoinDetectedTarget = 250 * time.Millisecond

// latencyRows are the p95 rows of cmd/paywatch-latency's
// BenchmarkLatency/<network>/<figure> lines, with p50, max and the poll
// interval of the same run beside them.
func latencyRows(res results) []row {
	label := map[string]string{"detected": "broadcast → detected", "confirmation": "block → confirmation"}
	node := map[string]string{"bitcoin": "btcd", "litecoin": "litecoind", "ethereum": "anvil"}
	var rows []row
	for _, network := range []string{"bitcoin", "litecoin", "ethereum"} {
		for _, figure := range []string{"detected", "confirmation"} {
			m, ok := res["BenchmarkLatency/"+network+"/"+figure]
			name := fmt.Sprintf("%s p95, %s (%s)", label[figure], network, node[network])
			target := latencyTarget
			if network == "litecoin" && figure == "detected" {
				target = litecoinDetectedTarget
			}
			if !ok {
				rows = append(rows, row{name, "not run", fmt.Sprintf("<= %d ms", target.Milliseconds()), ""})
				continue
			}
			other := fmt.Sprintf("p50 %.0f ms, max %.0f ms; poll %s, p95/poll %.3f", m["p50-ms"], m["max-ms"],
				time.Duration(m["poll-ms"])*time.Millisecond, m["p95-ms"]/m["poll-ms"])
			rows = append(rows, row{name, fmt.Sprintf("%.0f ms", m["p95-ms"]), fmt.Sprintf("<= %d ms", target.Milliseconds()), other})
		}
	}
	return rows
}
