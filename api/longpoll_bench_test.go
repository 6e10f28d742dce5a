package api_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// BenchmarkLongPoll1000 runs 1,000 clients long-polling GET /v1/events in a
// loop (100 on each of 10 storefront keys) against a real HTTP server on
// real PostgreSQL, appends events one at a time (the next once every client
// has the previous one) and reports:
//   - queries/event: statements the server sent to PostgreSQL per event,
//     counted by a wire-protocol proxy between the server and the database
//     (so the count does not depend on the code under test);
//   - p50-ms, p99-ms: from an event's commit to a client receiving it;
//   - heap-MB: heap in use (server and clients, one process) while every
//     client waits.
//
// Run it alone: go test -run '^$' -bench LongPoll1000 -benchtime 1x ./api/
func BenchmarkLongPoll1000(b *testing.B) {
	const keys, perKey, events = 10, 100, 20
	clients := keys * perKey
	var realURL string
	proxy := &countingProxy{}
	e := paywatchtest.New(b, paywatchtest.WithConfig(func(c *config.Config) {
		realURL = c.DatabaseURL
		c.DatabaseURL = proxy.start(b, c.DatabaseURL)
	}))
	ctx := context.Background()
	writer, err := store.Open(ctx, realURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(writer.Close)
	var plains []string
	for i := range keys {
		plain, _, err := e.Store.CreateAPIKey(ctx, fmt.Sprintf("bench-%d", i), []string{"storefront"}, e.Clock.Now())
		if err != nil {
			b.Fatal(err)
		}
		plains = append(plains, plain)
	}
	start, _ := appendEvent(b, writer)

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 10, MaxConnsPerHost: 0}}
	type receipt struct {
		id string
		at time.Time
	}
	var (
		mu        sync.Mutex
		received  []receipt
		committed = map[string]time.Time{}        // event id -> commit time
		got       = make([]atomic.Int64, clients) // events received per client
		waiting   atomic.Int64                    // requests in flight
		failures  atomic.Int64
	)
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cursor := start
			for cctx.Err() == nil {
				req, _ := http.NewRequestWithContext(cctx, "GET", e.Server.URL+"/v1/events?wait=30s&after="+cursor, nil)
				req.Header.Set("Authorization", "Bearer "+plains[i%keys])
				waiting.Add(1)
				resp, err := hc.Do(req)
				waiting.Add(-1)
				if err != nil {
					if cctx.Err() == nil {
						failures.Add(1)
					}
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				at := time.Now()
				if resp.StatusCode != 200 {
					failures.Add(1)
					b.Errorf("client %d: %d %s", i, resp.StatusCode, body)
					return
				}
				var page struct {
					Events []struct{ ID string } `json:"events"`
					Next   string                `json:"next"`
				}
				if err := json.Unmarshal(body, &page); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				for _, ev := range page.Events {
					received = append(received, receipt{ev.ID, at})
				}
				mu.Unlock()
				got[i].Add(int64(len(page.Events)))
				cursor = page.Next
			}
		}()
	}
	waitFor := func(what string, ok func() bool) {
		deadline := time.Now().Add(2 * time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				b.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(time.Millisecond) // a benchmark driver, not a test assertion
		}
	}
	allHave := func(k int64) func() bool {
		return func() bool {
			for i := range got {
				if got[i].Load() < k {
					return false
				}
			}
			return true
		}
	}
	waitFor("every client to wait", func() bool { return waiting.Load() == int64(clients) })
	// A warm-up event, not measured: every client has been answered once
	// (keys looked up, cursors resolved) before the count starts.
	warmID, warmAt := appendEvent(b, writer)
	committed[warmID] = warmAt
	waitFor("the warm-up event at every client", allHave(1))
	waitFor("every client to wait again", func() bool { return waiting.Load() == int64(clients) })
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapInuse) / (1 << 20)

	b.ResetTimer()
	q0 := proxy.queries.Load()
	for k := range events {
		id, at := appendEvent(b, writer)
		committed[id] = at
		waitFor(fmt.Sprintf("event %d at every client", k+1), allHave(int64(k+2)))
		waitFor("every client to wait again", func() bool { return waiting.Load() == int64(clients) })
	}
	q := proxy.queries.Load() - q0
	b.StopTimer()
	stop()
	wg.Wait()
	for i := range got {
		if n := got[i].Load(); n != events+1 {
			b.Fatalf("client %d received %d events, want %d", i, n, events+1)
		}
	}
	if failures.Load() > 0 {
		b.Fatalf("%d failed requests", failures.Load())
	}
	var latencies []time.Duration
	for _, r := range received {
		if r.id == warmID {
			continue // the warm-up
		}
		at, ok := committed[r.id]
		if !ok {
			b.Fatalf("a client received event %s that was not appended", r.id)
		}
		latencies = append(latencies, r.at.Sub(at))
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(q)/events, "queries/event")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(heap, "heap-MB")
}

// appendEvent commits one event and returns its id and commit time.
func appendEvent(b *testing.B, st *store.Store) (string, time.Time) {
	var ev store.Event
	err := st.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		ev, err = tx.AppendEvent(context.Background(), "intent.created", "", "", "", map[string]string{"bench": "yes"}, time.Now())
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return ev.ID, time.Now()
}

// countingProxy forwards PostgreSQL connections and counts the statements
// clients send: simple Query ('Q') and extended-protocol Bind ('B')
// messages, one per statement executed.
type countingProxy struct {
	queries atomic.Int64
}

// start listens on loopback and returns dbURL pointing through the proxy.
func (p *countingProxy) start(b *testing.B, dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c, target)
		}
	}()
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

func (p *countingProxy) serve(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s); c.Close() }()
	// The startup message has no type byte: length, then payload.
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:4]); err != nil {
		return
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	rest := make([]byte, n-4)
	if _, err := io.ReadFull(c, rest); err != nil {
		return
	}
	if _, err := s.Write(append(hdr[:4:4], rest...)); err != nil {
		return
	}
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		if hdr[0] == 'Q' || hdr[0] == 'B' {
			p.queries.Add(1)
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if _, err := s.Write(hdr[:]); err != nil {
			return
		}
		if _, err := io.CopyN(s, c, int64(n)-4); err != nil {
			return
		}
	}
}
