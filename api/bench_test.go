package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/paywatchtest"
)

// BenchmarkCreateIntent measures POST /v1/intents through the HTTP handler
// (auth, validation, quote, chain check, address derivation and allocation,
// intent and event in one transaction) against real PostgreSQL, with
// concurrent callers. It reports intents/s and latency percentiles.
//
// Its commits/callers=16 is the other side of the ratio (issue 37 item 1):
// what the same PostgreSQL, with the same settings, commits when 16
// callers each commit one small transaction (one single-row INSERT) in a
// loop, one commit a call. A creation is several statements, yet batching
// lets creation exceed that rate: a batch commits once for many creations.
//
//	go test -run '^$' -bench 'CreateIntent/(commits|BTC)/callers=16' -benchtime 3000x ./api/
func BenchmarkCreateIntent(b *testing.B) {
	b.Run(fmt.Sprintf("commits/callers=%d", 8*runtime.GOMAXPROCS(0)), func(b *testing.B) {
		e := paywatchtest.New(b)
		ctx := context.Background()
		pool := e.Store.Pool()
		if _, err := pool.Exec(ctx, `CREATE TABLE bench_commits (id BIGSERIAL PRIMARY KEY, caller BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL)`); err != nil {
			b.Fatal(err)
		}
		var seq atomic.Int64
		lat := parallel(b, 8, func() error {
			_, err := pool.Exec(ctx, `INSERT INTO bench_commits (caller, at) VALUES ($1, now())`, seq.Add(1))
			return err
		})
		reportRate(b, lat, "commits/s")
	})
	for _, c := range []struct {
		method string
		par    int
	}{{"BTC", 8}, {"USDT-TRC20", 8}, {"BTC", 2}} {
		method := c.method
		b.Run(fmt.Sprintf("%s/callers=%d", method, c.par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			// A production-sized gap: creations take pre-derived addresses.
			e := paywatchtest.New(b, paywatchtest.WithConfig(func(c *config.Config) {
				for _, n := range c.Networks {
					n.Gap = 500
				}
			}))
			e.Nets.CacheFor = time.Second // as serve runs it
			key := e.Keys["storefront"]
			var seq atomic.Int64
			lat := parallel(b, c.par, func() error {
				n := seq.Add(1)
				body := fmt.Sprintf(`{"kind":"order","reference":"BENCH-%d","amount_usd":"249.00","method":%q}`, n, method)
				req := httptest.NewRequest("POST", "/v1/intents", bytes.NewBufferString(body))
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				e.API.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					return fmt.Errorf("create: %d %s", rec.Code, rec.Body.String())
				}
				return nil
			})
			reportRate(b, lat, "intents/s")
		})
	}
}

// timed is the latencies of one parallel run and how long it took.
type timed struct {
	lat     []time.Duration
	elapsed time.Duration
}

// parallel runs call b.N times from par × GOMAXPROCS concurrent callers
// and returns each call's latency; the first error stops its caller.
func parallel(b *testing.B, par int, call func() error) timed {
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism(par)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t0 := time.Now()
			err := call()
			local = append(local, time.Since(t0))
			if err != nil {
				b.Error(err)
				break
			}
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	return timed{lat, elapsed}
}

// reportRate reports a parallel run's rate in unit and its p50 and p99.
func reportRate(b *testing.B, t timed, unit string) {
	lat := t.lat
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/t.elapsed.Seconds(), unit)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
