package devnet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Standby makes a streaming standby of pg under dir with pg_basebackup -R,
// named name (its application_name, what synchronous_standby_names
// lists), and starts it on port (0: a free one) with the given settings. The
// standby asks for no synchronous standby of its own once promoted.
func (pg *Postgres) Standby(ctx context.Context, dir, name string, port int, settings ...string) (*Postgres, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "sock"), 0o700); err != nil {
		return nil, err
	}
	// A standby is a copy of the primary: the same role, the same password.
	if err := os.WriteFile(filepath.Join(dir, "password"), []byte(pg.password+"\n"), 0o600); err != nil {
		return nil, err
	}
	asRoot := os.Geteuid() == 0
	if asRoot {
		if err := chownPostgres(dir); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s application_name=%s", pg.Port, pg.password, name)
	if err := pg.run(ctx, asRoot, "pg_basebackup", "-d", conninfo, "-D", data, "-R", "-X", "stream", "--no-sync", "-c", "fast"); err != nil {
		return nil, fmt.Errorf("pg_basebackup: %w", err)
	}
	// -R wrote primary_conninfo; later lines of the file win.
	extra := fmt.Sprintf("\nprimary_conninfo = '%s'\nsynchronous_standby_names = ''\n", conninfo)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(extra)
	f.Close()
	if err != nil {
		return nil, err
	}
	_ = os.Remove(filepath.Join(data, "postmaster.pid"))
	return StartPostgresWith(ctx, dir, port, settings...)
}

// Promote promotes a standby to a primary (pg_ctl promote) and waits until
// it accepts writes.
func (pg *Postgres) Promote(ctx context.Context) error {
	return pg.run(ctx, os.Geteuid() == 0, "pg_ctl", "-D", filepath.Join(pg.Dir, "data"), "-w", "-t", "60", "promote")
}

// Pids returns the postmaster's pid and its children's (the backends, the
// WAL sender, the background workers).
func (pg *Postgres) Pids() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(pg.Dir, "data", "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return nil, fmt.Errorf("postmaster.pid: %w", err)
	}
	pids := []int{pm}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the
		// last parenthesis.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pm {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

// Signal sends sig to the postmaster and every child of it: SIGKILL is a
// machine that lost power (sockets reset by the kernel), SIGSTOP one that
// vanished without closing anything (connections stay open, unanswered),
// SIGCONT brings it back.
func (pg *Postgres) Signal(sig syscall.Signal) error {
	pids, err := pg.Pids()
	if err != nil {
		return err
	}
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && err != syscall.ESRCH {
			return fmt.Errorf("kill -%d %d: %w", sig, p, err)
		}
	}
	return nil
}

// Kill9 kills the postmaster and its children (SIGKILL) and waits until
// they are gone.
func (pg *Postgres) Kill9() error {
	pids, err := pg.Pids()
	if err != nil {
		return err
	}
	if err := pg.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// alive: the process exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}
