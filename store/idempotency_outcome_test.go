package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// Migration 0014 turns the HTTP statuses stored with Idempotency-Keys
// before it into the domain's outcomes (201 created, 200 applied) and
// leaves a running claim (0) running.
func TestIdempotencyOutcomeMigrationMapsStoredStatuses(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now()
	_, key, err := s.CreateAPIKey(ctx, "outcome-"+now.Format("150405.000000"), []string{"storefront"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var sql string
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version == 14 {
			sql = m.SQL
		}
	}
	if sql == "" {
		t.Fatal("no migration 14")
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for k, st := range map[string]int{"created": 201, "applied": 200, "running": 0} {
		if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status, response, created_at)
			VALUES ($1, $2, 'h', $3, 'b', $4)`, key.ID, k, st, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int{"created": 1, "applied": 2, "running": 0} {
		var got int
		if err := tx.QueryRow(ctx, `SELECT status FROM idempotency_keys WHERE api_key_id = $1 AND key = $2`, key.ID, k).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: status %d after the migration, want %d", k, got, want)
		}
	}
}
