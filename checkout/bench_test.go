package checkout_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// benchPages is how many idle pages BenchmarkLiveConnections holds open.
const benchPages = 5000

// liveClientEnv makes the test binary the benchmark's client process.
const liveClientEnv = "PAYWATCH_LIVE_BENCH_CLIENT"

// BenchmarkLiveConnections holds benchPages pages open on one instance,
// each an idle live connection (server-sent events) of its own intent, from
// a separate client process (so this process's memory is the server's),
// then makes one decision per iteration (half of an intent paid, through
// the scanner and the decision on PostgreSQL) and measures the time from
// the decision's commit (its NOTIFY reaching this process) to the page's
// message arriving at its client.
// Metrics: bytes per open connection (Go heap and goroutine stacks, and
// the process's RSS), and decision → message p50, p95 and max.
//
//	go test ./checkout -run '^$' -bench LiveConnections -benchtime 100x
func BenchmarkLiveConnections(b *testing.B) {
	s := newSite(b, siteOptions{checkout: func(c *config.Checkout) {
		c.MaxLive, c.MaxLivePerClient, c.RequestsPerMinute = benchPages+100, benchPages+100, 1000000
	}})
	ins := make([]views.Intent, benchPages)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < benchPages; i += 4 {
				req := intents.CreateRequest{Kind: payment.Order, Reference: fmt.Sprintf("ORD-BENCH-%d", i), AmountUSD: "10.00", Method: "BTC"}
				res, err := s.Service.Create(context.Background(), req, nil)
				for try := 0; intents.KindOf(err) == intents.ChainUnavailable && try < 100; try++ {
					// The test's small gap: the replenisher can fall behind.
					res, err = s.Service.Create(context.Background(), req, nil)
				}
				mu.Lock()
				if err != nil && failed == nil {
					failed = err
				}
				ins[i] = res.View
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	u, _ := url.Parse(s.URL)
	var paths strings.Builder
	for _, in := range ins {
		paths.WriteString(s.Links.Path(in.ID) + "/live?lang=en\n")
	}

	heap0, stack0, rss0 := memory()
	g0 := runtime.NumGoroutine()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveBenchClient$")
	cmd.Env = append(os.Environ(), liveClientEnv+"="+u.Host)
	cmd.Stdin = strings.NewReader(paths.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	got := make([]chan int64, benchPages)
	for i := range got {
		got[i] = make(chan int64, 4)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 1 && f[0] == "ready":
				close(ready)
			case len(f) == 3 && f[0] == "got":
				i, _ := strconv.Atoi(f[1])
				at, _ := strconv.ParseInt(f[2], 10, 64)
				got[i] <- at
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Minute):
		b.Fatal("the client did not connect every page in 5 minutes")
	}
	if open := s.Page.Live(); open != benchPages {
		b.Fatalf("%d live connections open, want %d", open, benchPages)
	}
	heap1, stack1, rss1 := memory()
	b.ReportMetric(float64(runtime.NumGoroutine()-g0)/benchPages, "goroutines/conn")

	// The decision's commit is when its NOTIFY reaches this process (on
	// the notifier's shared connection, as the hub's wake-up does).
	nctx, stop := context.WithCancel(context.Background())
	defer stop()
	nsub, err := s.Store.Notifier().Subscribe(nctx)
	if err != nil {
		b.Fatal(err)
	}
	defer nsub.Close()
	notified := make(chan time.Time, 64)
	go func() {
		for {
			select {
			case <-nctx.Done():
				return
			case <-nsub.C:
				notified <- time.Now()
			}
		}
	}()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		in := ins[i]
		for len(notified) > 0 {
			<-notified
		}
		s.Pay(in, payment.Native, half(in), fmt.Sprintf("bench-%d", i))
		s.Sync(payment.Bitcoin)
		var decided time.Time
		select {
		case decided = <-notified:
		case <-time.After(time.Minute):
			b.Fatalf("decision %d: no NOTIFY", i)
		}
		select {
		case at := <-got[i]:
			lat = append(lat, time.Unix(0, at).Sub(decided))
		case <-time.After(time.Minute):
			b.Fatalf("page %d: no message a minute after the decision", i)
		}
		i++
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(heap1-heap0+stack1-stack0)/benchPages, "B/conn")
	b.ReportMetric(float64(rss1-rss0)/benchPages, "RSS-B/conn")
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
	b.ReportMetric(q(1), "max-ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d open pages: Go heap +%d B, stacks +%d B, RSS +%d B; %d decisions: p50 %.1f ms, p95 %.1f ms, max %.1f ms",
		benchPages, heap1-heap0, stack1-stack0, rss1-rss0, len(lat), q(0.5), q(0.95), q(1))
}

// memory returns the Go heap in use and goroutine stacks after a GC, and
// the process's resident set, in bytes.
func memory() (heap, stacks, rss uint64) {
	for range 4 { // each may halve idle goroutines' stacks
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				rss = kb * 1024
			}
		}
	}
	return ms.HeapInuse, ms.StackInuse, rss
}

// TestLiveBenchClient is BenchmarkLiveConnections' client process when
// PAYWATCH_LIVE_BENCH_CLIENT names the server (host:port); otherwise it
// returns at once. It opens one live connection per path read from stdin,
// prints "ready" once each has its first message, then "got <index>
// <unix ns>" for every later message.
func TestLiveBenchClient(t *testing.T) {
	host := os.Getenv(liveClientEnv)
	if host == "" {
		return // not the client process
	}
	var paths []string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		paths = append(paths, sc.Text())
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	say := func(s string) {
		mu.Lock()
		w.WriteString(s + "\n")
		w.Flush()
		mu.Unlock()
	}
	var first sync.WaitGroup
	first.Add(len(paths))
	for i, p := range paths {
		var conn net.Conn
		var err error
		for attempt := 0; attempt < 50; attempt++ {
			if conn, err = net.Dial("tcp", host); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", p, host)
		go func() {
			rd := bufio.NewReaderSize(conn, 1024)
			n := 0
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "event: state") {
					if n++; n == 1 {
						first.Done()
					} else {
						say(fmt.Sprintf("got %d %d", i, time.Now().UnixNano()))
					}
				}
			}
		}()
	}
	first.Wait()
	say("ready")
	select {} // until the benchmark kills this process
}
