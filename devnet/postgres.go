package devnet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a private PostgreSQL cluster on loopback. It trusts no one:
// TCP connections need the postgres role's password (scram-sha-256), kept
// in Dir/password (0600, made on the first start); the socket directory is
// private (0700) and local connections are peer-authenticated.
type Postgres struct {
	// Dir holds data/, sock/, password and server.log.
	Dir string
	// Port is the TCP port on 127.0.0.1.
	Port     int
	bin      string
	password string
}

// Password returns the postgres role's password.
func (pg *Postgres) Password() string { return pg.password }

// ensurePassword returns the password kept in file, making one (32 hex
// digits, 0600) when there is none.
func ensurePassword(file string) (string, error) {
	if b, err := os.ReadFile(file); err == nil {
		pw := strings.TrimSpace(string(b))
		if len(pw) < 16 || strings.Trim(pw, "0123456789abcdef") != "" {
			return "", fmt.Errorf("%s: not a password this package wrote", file)
		}
		return pw, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	return pw, os.WriteFile(file, []byte(pw+"\n"), 0o600)
}

// secureTrusting upgrades a cluster initialized with trust (before
// clusters had a password): the role gets its password, pg_hba.conf's
// trust lines become scram-sha-256 (TCP) and peer (the socket), and the
// server reloads.
func (pg *Postgres) secureTrusting(ctx context.Context, asRoot bool) error {
	hba := filepath.Join(pg.Dir, "data", "pg_hba.conf")
	b, err := os.ReadFile(hba)
	if err != nil {
		return err
	}
	var out []string
	changed := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") && f[len(f)-1] == "trust" {
			method := "scram-sha-256"
			if f[0] == "local" {
				method = "peer"
			}
			line = strings.TrimSuffix(strings.TrimRight(line, " \t"), "trust") + method
			changed = true
		}
		out = append(out, line)
	}
	if !changed {
		return nil
	}
	conn, err := connectRetry(ctx, pg.URL("postgres"))
	if err != nil {
		return err
	}
	// The password is hex digits (ensurePassword): a literal needs no escaping.
	_, err = conn.Exec(ctx, "ALTER ROLE postgres PASSWORD '"+pg.password+"'")
	conn.Close(ctx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(hba, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		return err
	}
	return pg.run(ctx, asRoot, "pg_ctl", "-D", filepath.Join(pg.Dir, "data"), "reload")
}

// PostgresBinDir finds the directory of initdb and pg_ctl: pg_config's
// bindir, the Debian layout, or PATH.
func PostgresBinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("%w: PostgreSQL server (apt-get install -y postgresql)", ErrMissing)
}

// StartPostgres initializes dir (when empty) and starts the cluster on port
// (0 picks a free one). As root it runs the server as the postgres user, since
// initdb refuses root. A second call on the same dir reuses the data.
func StartPostgres(ctx context.Context, dir string, port int) (*Postgres, error) {
	return StartPostgresWith(ctx, dir, port)
}

// StartPostgresWith is StartPostgres with extra server settings
// ("name=value"), which win over the defaults (fsync=off,
// synchronous_commit=off).
func StartPostgresWith(ctx context.Context, dir string, port int, settings ...string) (*Postgres, error) {
	bin, err := PostgresBinDir()
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	pg := &Postgres{Dir: dir, Port: port, bin: bin}
	// The socket directory is private: only the server's user reaches it.
	if err := os.MkdirAll(filepath.Join(dir, "sock"), 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(filepath.Join(dir, "sock"), 0o700); err != nil {
		return nil, err
	}
	pwFile := filepath.Join(dir, "password")
	if pg.password, err = ensurePassword(pwFile); err != nil {
		return nil, err
	}
	asRoot := os.Geteuid() == 0
	if asRoot {
		if err := chownPostgres(dir); err != nil {
			return nil, err
		}
	}
	fresh := false
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		if err := pg.run(ctx, asRoot, "initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres",
			"--auth-host=scram-sha-256", "--auth-local=peer", "--pwfile="+pwFile,
			"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
			return nil, fmt.Errorf("initdb: %w", err)
		}
		fresh = true
	}
	// A previous run killed hard may leave a stale pid file.
	_ = pg.run(ctx, asRoot, "pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "stop")
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
		port, filepath.Join(dir, "sock"))
	for _, s := range settings {
		opts += " -c " + s
	}
	if err := pg.run(ctx, asRoot, "pg_ctl", "-D", filepath.Join(dir, "data"), "-l",
		filepath.Join(dir, "server.log"), "-w", "-t", "30", "-o", opts, "start"); err != nil {
		return nil, fmt.Errorf("pg_ctl start: %w\n%s", err, tail(filepath.Join(dir, "server.log"), 20))
	}
	if !fresh {
		if err := pg.secureTrusting(ctx, asRoot); err != nil {
			return nil, fmt.Errorf("securing a cluster made with trust: %w", err)
		}
	}
	return pg, nil
}

// URL returns the connection URL of database db.
func (pg *Postgres) URL(db string) string {
	return pg.URLOf(db, pg.Port)
}

// URLOf returns the connection URL of database db on the clusters at ports
// (a primary and its standbys, which share the role's password), with any
// extra query parameters.
func (pg *Postgres) URLOf(db string, ports ...int) string {
	hosts := make([]string, len(ports))
	for i, p := range ports {
		hosts[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	return fmt.Sprintf("postgres://postgres:%s@%s/%s?sslmode=disable", pg.password, strings.Join(hosts, ","), db)
}

// CreateDatabase creates db if it does not exist.
func (pg *Postgres) CreateDatabase(ctx context.Context, db string) error {
	return CreateDatabase(ctx, pg.URL("postgres"), db)
}

// Stop shuts the cluster down (fast mode). Calling it twice is harmless.
func (pg *Postgres) Stop() error {
	return pg.run(context.Background(), os.Geteuid() == 0, "pg_ctl", "-D", filepath.Join(pg.Dir, "data"), "-m", "fast", "-w", "stop")
}

func (pg *Postgres) run(ctx context.Context, asRoot bool, tool string, args ...string) error {
	path := filepath.Join(pg.bin, tool)
	var cmd *exec.Cmd
	if asRoot {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", tool, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func chownPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs the postgres user (apt-get install -y postgresql): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// CreateDatabase connects to adminURL and creates db if it does not exist.
func CreateDatabase(ctx context.Context, adminURL, db string) error {
	conn, err := connectRetry(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize())
	return err
}

func connectRetry(ctx context.Context, url string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
