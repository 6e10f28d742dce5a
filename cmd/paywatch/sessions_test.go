package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

// `paywatch sessions list` shows the live console sessions by id (never a
// token); `sessions end ID` ends that one and leaves the others.
func TestSessionsCommandsEndOneSession(t *testing.T) {
	db := devnettest.Database(t)
	t.Setenv("PAYWATCH_DATABASE_URL", db)
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_, key, err := st.CreateAPIKey(ctx, "clerk", []string{"finance"}, now)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{"laptop-session-token", "stolen-session-token"}
	for _, tok := range tokens {
		if err := st.CreateConsoleSession(ctx, tok, key.ID, now, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runCLI(t, "sessions", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range tokens {
		if !strings.Contains(out, store.ConsoleSessionID(tok)) || strings.Contains(out, tok) {
			t.Fatalf("sessions list does not show %s by id only:\n%s", tok, out)
		}
	}
	if !strings.Contains(out, "clerk") {
		t.Fatalf("sessions list does not name the key:\n%s", out)
	}
	stolen := store.ConsoleSessionID(tokens[1])
	if _, _, err := runCLI(t, "sessions", "end", stolen); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ConsoleSessionByToken(ctx, tokens[1], time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the ended session: %v", err)
	}
	if _, err := st.ConsoleSessionByToken(ctx, tokens[0], time.Now()); err != nil {
		t.Fatalf("the other session: %v", err)
	}
	if _, _, err := runCLI(t, "sessions", "end", stolen); err == nil || !strings.Contains(err.Error(), stolen) {
		t.Fatalf("ending it again: %v", err)
	}
}
