package api_test

import (
	"bytes"
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
//	go test -run '^$' -bench CreateIntent -benchtime 3000x ./api/
func BenchmarkCreateIntent(b *testing.B) {
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
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			b.SetParallelism(c.par) // par × GOMAXPROCS concurrent callers
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				local := make([]time.Duration, 0, 1024)
				for pb.Next() {
					n := seq.Add(1)
					body := fmt.Sprintf(`{"kind":"order","reference":"BENCH-%d","amount_usd":"249.00","method":%q}`, n, method)
					req := httptest.NewRequest("POST", "/v1/intents", bytes.NewBufferString(body))
					req.Header.Set("Authorization", "Bearer "+key)
					rec := httptest.NewRecorder()
					t0 := time.Now()
					e.API.ServeHTTP(rec, req)
					local = append(local, time.Since(t0))
					if rec.Code != http.StatusCreated {
						b.Errorf("create: %d %s", rec.Code, rec.Body.String())
						return
					}
				}
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "intents/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}
