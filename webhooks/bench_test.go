package webhooks_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/webhooks"
)

// benchStore opens a fresh migrated database.
func benchStore(b *testing.B) *store.Store {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, devnettest.Database(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return st
}

// okReceiver verifies each signature and answers 200.
func okReceiver(b *testing.B, secret []byte, got *atomic.Int64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhooks.Verify(secret, r.Header.Get(webhooks.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		got.Add(1)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func appendEvent(b *testing.B, st *store.Store) {
	err := st.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.AppendEvent(context.Background(), "intent.created", "", "", "bench", map[string]string{"id": "pi_bench", "status": "awaiting_payment"}, time.Now())
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWebhookPipeline measures events appended (one transaction each)
// and delivered, signed, one POST each, to a local receiver answering 200:
// the clock stops when the receiver has them all.
func BenchmarkWebhookPipeline(b *testing.B) {
	st := benchStore(b)
	secret := []byte("bench")
	var got atomic.Int64
	url := okReceiver(b, secret, &got)
	s := start(st, webhooks.Endpoint{Name: "bench", URL: url, Secret: secret}, webhooks.Options{Poll: 100 * time.Millisecond})
	defer s.stop(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		appendEvent(b, st)
	}
	waitFor(b, "deliveries", 5*time.Minute, func() bool { return got.Load() == int64(b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkWebhookBacklog measures delivery alone: b.N events already in
// the log, delivered in order to a receiver answering 200.
func BenchmarkWebhookBacklog(b *testing.B) {
	st := benchStore(b)
	secret := []byte("bench")
	var got atomic.Int64
	url := okReceiver(b, secret, &got)
	for range b.N {
		appendEvent(b, st)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s := start(st, webhooks.Endpoint{Name: "bench", URL: url, Secret: secret}, webhooks.Options{Poll: 100 * time.Millisecond})
	waitFor(b, "deliveries", 5*time.Minute, func() bool { return got.Load() == int64(b.N) })
	b.StopTimer()
	s.stop(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
