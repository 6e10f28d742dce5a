package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/ethdev"
)

// install installs the missing peers: PostgreSQL and litecoind from Debian
// (as root), btcd with go install, anvil from npm.
func (s *sandbox) install(ctx context.Context) error {
	if _, err := devnet.PostgresBinDir(); err != nil {
		if os.Geteuid() != 0 {
			return fmt.Errorf("%w; install it (as root: apt-get install -y postgresql) and run again", err)
		}
		s.say("installing PostgreSQL (apt-get install postgresql) …")
		if err := aptInstall(ctx, "postgresql"); err != nil {
			return err
		}
	}
	if err := devnet.InstallBtcd(ctx); err != nil {
		return err
	}
	if _, err := os.Stat(devnet.LitecoindPath); err != nil {
		s.say("installing litecoind (apt-get install litecoind) …")
	}
	if err := devnet.InstallLitecoind(ctx); err != nil {
		return err
	}
	if _, err := ethdev.FindAnvil(); err != nil {
		if _, err := exec.LookPath("npm"); err != nil && os.Geteuid() == 0 {
			s.say("installing npm (apt-get install npm) to install anvil …")
			if err := aptInstall(ctx, "npm"); err != nil {
				return err
			}
		}
		s.say("installing anvil from npm into %s …", ethdev.AnvilCacheDir())
		if _, err := ethdev.InstallAnvil(ctx, ethdev.AnvilCacheDir()); err != nil {
			return err
		}
	}
	return nil
}

// stopStale ends nodes left running by an earlier run of this sandbox that
// was killed before it could stop them (its nodes run in their own process
// groups, so a SIGKILL or a closed terminal can orphan them). Only btcd,
// litecoind, anvil and paywatch processes whose command line names a path
// inside this sandbox's directory are stopped: SIGTERM, then SIGKILL after
// 15 s.
// PostgreSQL needs nothing: StartPostgres stops a stale server itself.
func (s *sandbox) stopStale() {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		switch filepath.Base(args[0]) {
		case "btcd", "litecoind", "anvil", "paywatch":
		default:
			continue
		}
		ours := false
		for _, a := range args[1:] {
			if i := strings.Index(a, s.dir+string(filepath.Separator)); i >= 0 {
				ours = true
				break
			}
		}
		if !ours {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		s.say("stopping %s (pid %d) left running by an earlier sandbox run", filepath.Base(args[0]), pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(15 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// aptInstall installs Debian packages, updating the package lists when the
// first attempt fails (a fresh image has none).
func aptInstall(ctx context.Context, pkgs ...string) error {
	install := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err == nil {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w\n%s", err, out)
	}
	if out, err := install(); err != nil {
		return fmt.Errorf("apt-get install %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}
