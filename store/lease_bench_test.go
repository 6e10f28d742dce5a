package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// BenchmarkFence is the fence's cost on a leader's transaction: one write
// (a cursor's tips, as ApplyTips makes) with and without the fence, which
// is queued and sent in the write's own round trip.
func BenchmarkFence(b *testing.B) {
	s := fresh(b)
	ctx := context.Background()
	l, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "bench", TTL: time.Hour})
	if err != nil || !ok {
		b.Fatalf("lease: %v %v", ok, err)
	}
	defer l.Release()
	if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InitCursor(ctx, "bitcoin", 0, "genesis", now) }); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		fence *store.Fence
	}{{"unfenced", nil}, {"fenced", l.Fence()}} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				if err := s.InTx(ctx, func(tx *store.Tx) error {
					tx.Fence(c.fence)
					return tx.SetTips(ctx, "bitcoin", int64(i), 0, now)
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
