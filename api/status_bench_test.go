package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paywatch/paywatch/paywatchtest"
)

// BenchmarkStatus measures GET /v1/status with many watched addresses, and,
// as the other side of the ratio, the count(*) the status used to run for
// every network on every call, on the same table in the same run.
//
//	go test -run '^$' -bench Status -benchtime 200x ./api/
func BenchmarkStatus(b *testing.B) {
	const watched = 200_000
	e := paywatchtest.New(b)
	ctx := context.Background()
	if _, err := e.Store.Pool().Exec(ctx, `INSERT INTO addresses (network, key, address, source, created_at)
		SELECT 'bitcoin', '\x0014'::bytea || substring(sha256(int8send(i)) FROM 1 FOR 20), 'bench-' || i, 'bench', $1
		FROM generate_series(1, $2::bigint) AS i`, time.Now().Add(-time.Hour), watched); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Store.Pool().Exec(ctx, `VACUUM ANALYZE addresses`); err != nil {
		b.Fatal(err)
	}
	key := e.Keys["operator"]
	b.Run("status", func(b *testing.B) {
		for b.Loop() {
			req := httptest.NewRequest("GET", "/v1/status", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			e.API.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status: %d %s", rec.Code, rec.Body.String())
			}
		}
	})
	b.Run("count(*)-per-network", func(b *testing.B) {
		for b.Loop() {
			var n int64
			if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM addresses WHERE network = 'bitcoin'`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n < watched {
				b.Fatalf("count %d", n)
			}
		}
	})
}
