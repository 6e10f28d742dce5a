package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

// solanaConfig writes a config with Solana on chain and returns its path.
func solanaConfig(t *testing.T, db, chain string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "paywatch.yaml")
	y := fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
log_level: warn
rates: {sources: [coinbase, kraken]}
methods:
  SOL: {enabled: true}
networks:
  solana: {enabled: true, chain: %s, rpc_url: "http://127.0.0.1:1"}
`, db, chain)
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The sandbox's Solana pool has public secret keys: on mainnet `pool
// import` refuses it (naming the key) and imports nothing, and a daemon
// whose database already holds one refuses to start. On regtest both
// accept it.
func TestMainnetRefusesTheSandboxSolanaPool(t *testing.T) {
	db := devnettest.Database(t)
	t.Setenv("PAYWATCH_DATABASE_URL", "")
	pool := filepath.Join(t.TempDir(), "pool.txt")
	own := "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	if err := os.WriteFile(pool, []byte(own+"\n"+addresses.SandboxSolanaPool[3]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mainnet := solanaConfig(t, db, "mainnet")
	_, _, err := runCLI(t, "pool", "import", "--config", mainnet, "--network", "solana", pool)
	if err == nil || !strings.Contains(err.Error(), addresses.SandboxSolanaPool[3]) || !strings.Contains(err.Error(), "public") {
		t.Fatalf("mainnet pool import of a sandbox key: %v", err)
	}
	if out, _, err := runCLI(t, "pool", "count", "--config", mainnet, "--network", "solana"); err != nil || !strings.HasPrefix(out, "0") {
		t.Fatalf("after a refused import the pool holds %q (%v)", out, err)
	}
	if _, _, err := runCLI(t, "pool", "import", "--config", solanaConfig(t, db, "regtest"), "--network", "solana", pool); err != nil {
		t.Fatalf("regtest pool import: %v", err)
	}
	cfg, err := config.Load(mainnet)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDaemon(context.Background(), cfg, newLogger(io.Discard, "warn"))
	if err == nil {
		d.Close()
		t.Fatal("a mainnet daemon started over the sandbox's Solana pool")
	}
	if !strings.Contains(err.Error(), addresses.SandboxSolanaPool[3]) || !strings.Contains(err.Error(), "networks.solana") {
		t.Fatalf("mainnet daemon over the sandbox pool: %v", err)
	}
}
