package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// Migration 0024 gives the sessions stored before it the id their token
// gives (ConsoleSessionID) and their creation as last use.
func TestConsoleSessionMigrationNamesTheOldSessions(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, key, err := s.CreateAPIKey(ctx, "sessions-"+now.Format("150405.000000"), []string{"finance"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var sql string
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version == 24 {
			sql = m.SQL
		}
	}
	if sql == "" {
		t.Fatal("no migration 24")
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The table as it was before 0024, holding one session.
	if _, err := tx.Exec(ctx, `ALTER TABLE console_sessions DROP COLUMN id, DROP COLUMN last_seen_at`); err != nil {
		t.Fatal(err)
	}
	token := "old-session-token"
	hash := sha256.Sum256([]byte(token))
	if _, err := tx.Exec(ctx, `INSERT INTO console_sessions (hash, api_key_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		hash[:], key.ID, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	var id string
	var seen time.Time
	if err := tx.QueryRow(ctx, `SELECT id, last_seen_at FROM console_sessions WHERE hash = $1`, hash[:]).Scan(&id, &seen); err != nil {
		t.Fatal(err)
	}
	if id != store.ConsoleSessionID(token) || !seen.Equal(now) {
		t.Fatalf("after 0024: id %s (want %s), last seen %s (want %s)", id, store.ConsoleSessionID(token), seen, now)
	}
}

// A session can be listed and ended by its id, without its token; its last
// use only moves forward.
func TestConsoleSessionsAreListedAndEndedByID(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, key, err := s.CreateAPIKey(ctx, "end-"+now.Format("150405.000000"), []string{"finance"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"tok-a-" + now.String(), "tok-b-" + now.String()} {
		if err := s.CreateConsoleSession(ctx, tok, key.ID, now, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := "tok-a-"+now.String(), "tok-b-"+now.String()
	if err := s.TouchConsoleSession(ctx, a, now.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchConsoleSession(ctx, a, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	cs, err := s.ConsoleSessionByToken(ctx, a, now)
	if err != nil || cs.ID != store.ConsoleSessionID(a) || !cs.LastSeenAt.Equal(now.Add(5*time.Minute)) || cs.Key.ID != key.ID {
		t.Fatalf("session a: %+v %v", cs, err)
	}
	list, err := s.ConsoleSessions(ctx, now)
	found := map[string]bool{}
	for _, x := range list {
		found[x.ID] = true
	}
	if err != nil || !found[store.ConsoleSessionID(a)] || !found[store.ConsoleSessionID(b)] {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	if err := s.EndConsoleSession(ctx, store.ConsoleSessionID(a)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsoleSessionByToken(ctx, a, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ended session a: %v", err)
	}
	if _, err := s.ConsoleSessionByToken(ctx, b, now); err != nil {
		t.Fatalf("session b after ending a: %v", err)
	}
	if err := s.EndConsoleSession(ctx, store.ConsoleSessionID(a)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ending a again: %v", err)
	}
}
