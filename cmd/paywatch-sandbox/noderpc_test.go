package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

// readmeBlock returns the first ```sh block after the README line that
// contains heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("the README has no %q", heading)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatalf("no sh block after %q", heading)
	}
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatalf("the sh block after %q does not end", heading)
	}
	return s[:end]
}

// The README says plainly what the sandbox's node URLs do: btcd answers
// chain calls and mines, refuses every wallet call (so only
// `paywatch-sandbox pay` pays BTC), and litecoind's wallet pays. Its block
// is run as written, with the sandbox.env the sandbox writes, against btcd
// and litecoind started as the sandbox starts them (issue 36 item 4).
func TestREADMENodeURLCommands(t *testing.T) {
	block := readmeBlock(t, "### What the node URLs do")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := sandboxDir(t)
	btcd, err := devnet.StartBtcd(ctx, filepath.Join(dir, "btcd"), 0)
	devnettest.Need(t, "btcd", err)
	defer btcd.Stop()
	ltc, err := devnet.StartLitecoind(ctx, filepath.Join(dir, "litecoind"), 0, false)
	devnettest.Need(t, "litecoind", err)
	defer ltc.Stop()
	to, err := ltc.NewAddress(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(block, "<LTC intent address>") {
		t.Fatalf("the block no longer pays <LTC intent address>:\n%s", block)
	}
	block = strings.ReplaceAll(block, "<LTC intent address>", to)
	if err := os.MkdirAll(filepath.Join(dir, devDir), 0o755); err != nil {
		t.Fatal(err)
	}
	env := sandboxEnv{envBitcoin: btcd.RPCURL, envLitecoin: ltc.RPCURL}
	if err := env.write(filepath.Join(dir, devDir, "sandbox.env")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", block)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's block: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 5 {
		t.Fatalf("the block printed %d lines, want 5:\n%s", len(lines), out)
	}
	type answer struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	var a [5]answer
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &a[i]); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
	}
	var height int64
	if json.Unmarshal(a[0].Result, &height) != nil || height < 101 {
		t.Errorf("btcd getblockcount: %s", lines[0])
	}
	var mined []string
	if json.Unmarshal(a[1].Result, &mined) != nil || len(mined) != 1 {
		t.Errorf("btcd generate 1: %s", lines[1])
	}
	if e := a[2].Error; e == nil || e.Code != -1 || !strings.Contains(e.Message, "does not implement wallet commands") {
		t.Errorf("btcd getbalance: %s, want the no-wallet error the README quotes", lines[2])
	}
	var balance float64
	if json.Unmarshal(a[3].Result, &balance) != nil || balance <= 0 {
		t.Errorf("litecoind getbalance: %s", lines[3])
	}
	var txid string
	if json.Unmarshal(a[4].Result, &txid) != nil || len(txid) != 64 {
		t.Fatalf("litecoind sendtoaddress: %s", lines[4])
	}
	var tx struct{ Amount float64 }
	if err := ltc.Call(ctx, "gettransaction", &tx, txid); err != nil {
		t.Fatalf("the README's payment %s: %v", txid, err)
	}
}
