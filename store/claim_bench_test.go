package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// BenchmarkTakeDerived measures a claim of eight pre-derived addresses (a
// batch of creations' TakeDerivedAddress), with a thousand free, after
// `claimed` addresses were claimed since the free-address queue was last
// vacuumed, and after the replenisher's vacuum. Before the queue, a claim
// read a partial index of the addresses table whose front kept an entry
// for every address claimed until that table's autovacuum (every two
// million claims at ten million addresses).
//
//	go test -run '^$' -bench TakeDerived ./store/
func BenchmarkTakeDerived(b *testing.B) {
	for _, c := range []struct {
		claimed int
		vacuum  bool
	}{{0, false}, {200_000, false}, {200_000, true}} {
		b.Run(fmt.Sprintf("claimed=%d/vacuumed=%t", c.claimed, c.vacuum), func(b *testing.B) {
			ctx := context.Background()
			s := fresh(b)
			// Only the benchmark's own vacuum runs.
			if _, err := s.Pool().Exec(ctx, `ALTER TABLE free_addresses SET (autovacuum_enabled = false)`); err != nil {
				b.Fatal(err)
			}
			network, source := "bitcoin", store.NewID("src")
			now := time.Now().UTC()
			next := int64(0)
			derive := func(n int) {
				rows := make([]store.Address, n)
				for i := range rows {
					rows[i] = store.Address{Network: network, Key: []byte(store.NewID("k")), Address: store.NewID("bc1q"),
						Source: source, Index: next, CreatedAt: now}
					next++
				}
				if err := s.InTx(ctx, func(tx *store.Tx) error { _, err := tx.AddAddresses(ctx, rows); return err }); err != nil {
					b.Fatal(err)
				}
			}
			claim := func() {
				ids := make([]string, 8)
				for i := range ids {
					ids[i] = store.NewID("pi")
				}
				err := s.InTx(ctx, func(tx *store.Tx) error {
					got, err := tx.BeginCreations(ctx, store.Creations{IntentIDs: ids, Network: network, Source: source, Now: now})
					if err == nil && len(got.Taken) != len(ids) {
						err = fmt.Errorf("%d of %d addresses taken", len(got.Taken), len(ids))
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			for range c.claimed / 1000 {
				derive(1000)
				for range 1000 / 8 {
					claim()
				}
			}
			if c.vacuum {
				if err := s.VacuumFreeAddresses(ctx); err != nil {
					b.Fatal(err)
				}
			}
			derive(1000 + 8*b.N)
			b.ResetTimer()
			for range b.N {
				claim()
			}
		})
	}
}
