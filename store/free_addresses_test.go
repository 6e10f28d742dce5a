package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

// Migration 0018 queues every address not handed out (derived ones by
// index, pool ones in import order) and none that was, refuses to drop
// addresses.intent_id while an address is assigned to an intent that does
// not have it, and from then on queues every address inserted.
func TestFreeAddressesMigrationQueuesTheFreeOnes(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, devnettest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var m18 string
	for _, m := range ms {
		switch {
		case m.Version < 18:
			if _, err := pool.Exec(ctx, m.SQL); err != nil {
				t.Fatalf("migration %d: %v", m.Version, err)
			}
		case m.Version == 18:
			m18 = m.SQL
		}
	}
	if m18 == "" {
		t.Fatal("no migration 18")
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO addresses (network, key, address, source, derivation_index, created_at) VALUES
			('bitcoin', 'k0', 'a0', 'fp', 0, now()), ('bitcoin', 'k1', 'a1', 'fp', 1, now()), ('bitcoin', 'k2', 'a2', 'fp', 2, now()),
			('solana', 'p0', 's0', 'pool', NULL, now()), ('solana', 'p1', 's1', 'pool', NULL, now()), ('solana', 'p2', 's2', 'pool', NULL, now());
		INSERT INTO payables (kind, reference, amount_cents, created_at) VALUES ('order', 'R1', 100, now()), ('order', 'R2', 100, now());
		INSERT INTO intents (id, payable_id, method, network, asset, amount, address, address_key, rate, rate_sources, rate_at,
				expires_at, status, confirmations_required, created_at, updated_at)
			SELECT 'pi_' || convert_from(a.key, 'UTF8'), p.id, CASE a.network WHEN 'bitcoin' THEN 'BTC' ELSE 'SOL' END, a.network, 'native', 1000, a.address, a.key,
				1, '{test}', now(), now(), 'awaiting_payment', 1, now(), now()
			FROM addresses a JOIN payables p ON p.reference = CASE a.network WHEN 'bitcoin' THEN 'R1' ELSE 'R2' END
			WHERE a.key IN ('k1', 'p1');
		UPDATE addresses SET intent_id = 'pi_' || convert_from(key, 'UTF8'), assigned_at = now() WHERE key IN ('k1', 'p1');`); err != nil {
		t.Fatal(err)
	}

	// An assignment the intents do not hold stops the migration.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE addresses SET intent_id = 'pi_elsewhere', assigned_at = now() WHERE key = 'k2'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, m18)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "assigned to an intent that does not have it") {
		t.Fatalf("migration over an inconsistent assignment: %v", err)
	}

	if _, err := pool.Exec(ctx, m18); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO addresses (network, key, address, source, derivation_index, created_at)
		VALUES ('bitcoin', 'k3', 'a3', 'fp', 3, now())`); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT f.network || ' ' || f.lane || ' ' || convert_from(f.key, 'UTF8') || ' ' ||
			(f.ord = coalesce(a.derivation_index, a.seq))::text
		FROM free_addresses f JOIN addresses a USING (network, key) ORDER BY f.network, f.lane, f.ord`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := "bitcoin fp k0 true,bitcoin fp k2 true,bitcoin fp k3 true,solana  p0 true,solana  p2 true"
	if strings.Join(got, ",") != want {
		t.Fatalf("queued %q\nwant   %q", strings.Join(got, ","), want)
	}
}
