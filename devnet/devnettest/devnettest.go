package devnettest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/devnet"
)

// Need stops the test when a peer could not be had: a failure under CI, a
// skip elsewhere.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required under CI: %v", what, err)
	}
	t.Skipf("%s unavailable: %v", what, err)
}

// AdminURL returns the URL of a PostgreSQL server's maintenance database:
// PAYWATCH_TEST_DATABASE_URL when set, else a shared cluster under the temp
// directory, started on first use and reused by every test binary.
func AdminURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("PAYWATCH_TEST_DATABASE_URL"); u != "" {
		return u
	}
	u, err := sharedCluster()
	Need(t, "PostgreSQL", err)
	return u
}

// Database creates a fresh, empty database and returns its URL. It is dropped
// when the test ends.
func Database(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pwtest_" + hex.EncodeToString(b[:])
	if err := devnet.CreateDatabase(ctx, admin, name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("PAYWATCH_TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return u.String()
}

// sharedCluster starts (or finds) the per-user throwaway cluster. A file lock
// keeps parallel test binaries from starting it twice.
func sharedCluster() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("paywatch-testpg-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	portFile := filepath.Join(dir, "port")
	if b, err := os.ReadFile(portFile); err == nil {
		if port, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			// The cluster's password (devnet.Postgres keeps it beside the data).
			pw, _ := os.ReadFile(filepath.Join(dir, "cluster", "password"))
			admin := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", strings.TrimSpace(string(pw)), port)
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			conn, err := pgx.Connect(pctx, admin)
			pcancel()
			if err == nil {
				conn.Close(ctx)
				return admin, nil
			}
		}
	}
	pg, err := devnet.StartPostgres(ctx, filepath.Join(dir, "cluster"), 0)
	if err != nil {
		// The cluster holds only throwaway test databases: when a previous
		// run left it unusable (killed mid-write), start over from scratch.
		if rmErr := os.RemoveAll(filepath.Join(dir, "cluster")); rmErr != nil {
			return "", fmt.Errorf("%v; and removing the old cluster: %w", err, rmErr)
		}
		if pg, err = devnet.StartPostgres(ctx, filepath.Join(dir, "cluster"), 0); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(portFile, []byte(strconv.Itoa(pg.Port)), 0o644); err != nil {
		return "", err
	}
	return pg.URL("postgres"), nil
}
