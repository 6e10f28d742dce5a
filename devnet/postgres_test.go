package devnet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

// The sandbox's (and the tests') PostgreSQL trusts no one: a TCP
// connection without the password is refused, the socket directory is
// private, and a cluster made by an earlier version with trust is secured
// on its next start with its data kept (issue 34 item 4: initdb -A trust
// and a 0755 socket directory let every local user in).
func TestPostgresNeedsItsPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Not t.TempDir(): as root the server runs as postgres, which must
	// reach the directory.
	dir, err := os.MkdirTemp("", "paywatch-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pg, err := devnet.StartPostgres(ctx, dir, 0)
	devnettest.Need(t, "PostgreSQL", err)
	defer pg.Stop()
	assertSecure(ctx, t, pg)

	// Made with trust, as before: the next start secures it, data kept.
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "data", "pg_hba.conf")
	b, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	trusting := strings.NewReplacer("scram-sha-256", "trust", "peer", "trust").Replace(string(b))
	if err := os.WriteFile(old, []byte(trusting), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "sock"), 0o755); err != nil {
		t.Fatal(err)
	}
	pg, err = devnet.StartPostgres(ctx, dir, pg.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	assertSecure(ctx, t, pg)
}

func assertSecure(ctx context.Context, t *testing.T, pg *devnet.Postgres) {
	t.Helper()
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatalf("with the password: %v", err)
	}
	conn.Close(ctx)
	noPassword := strings.Replace(pg.URL("postgres"), ":"+pg.Password()+"@", "@", 1)
	if noPassword == pg.URL("postgres") || pg.Password() == "" {
		t.Fatal("the URL carries no password")
	}
	if conn, err := pgx.Connect(ctx, noPassword); err == nil {
		conn.Close(ctx)
		t.Fatal("a connection without the password was let in")
	}
	wrong := strings.Replace(pg.URL("postgres"), pg.Password(), strings.Repeat("0", len(pg.Password())), 1)
	if conn, err := pgx.Connect(ctx, wrong); err == nil {
		conn.Close(ctx)
		t.Fatal("a wrong password was let in")
	}
	fi, err := os.Stat(filepath.Join(pg.Dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("socket directory mode %v, want 0700", fi.Mode().Perm())
	}
	pf, err := os.Stat(filepath.Join(pg.Dir, "password"))
	if err != nil || pf.Mode().Perm()&0o077 != 0 {
		t.Fatalf("password file: %v %v, want 0600", err, pf.Mode())
	}
}
