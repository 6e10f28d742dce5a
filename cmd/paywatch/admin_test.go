package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestAPIKeyCreatePrintsOnlyTheKey(t *testing.T) {
	t.Setenv("PAYWATCH_DATABASE_URL", devnettest.Database(t))
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	out, _, err := runCLI(t, "apikey", "create", "--scope", "storefront,finance", "--name", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^pw_[a-z2-7]{32}\n$`).MatchString(out) {
		t.Fatalf("stdout %q is not just the key", out)
	}
	st, err := store.Open(context.Background(), os.Getenv("PAYWATCH_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := st.APIKeyByPlain(context.Background(), strings.TrimSpace(out))
	if err != nil || k.Name != "shop" || !k.HasScope("finance") || k.HasScope("operator") {
		t.Fatalf("stored key: %+v %v", k, err)
	}
	if _, _, err := runCLI(t, "apikey", "create", "--scope", "admin", "--name", "x"); err == nil || !strings.Contains(err.Error(), "admin") {
		t.Fatalf("unknown scope: %v", err)
	}
	if _, _, err := runCLI(t, "apikey", "create", "--scope", "finance", "--name", "shop"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("duplicate name: %v", err)
	}
	out, _, err = runCLI(t, "apikey", "list")
	if err != nil || !strings.Contains(out, "shop") || strings.Contains(out, "pw_") {
		t.Fatalf("list: %q %v", out, err)
	}
}

func TestPoolImportValidatesTheWholeFileFirst(t *testing.T) {
	t.Setenv("PAYWATCH_DATABASE_URL", devnettest.Database(t))
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	content := addresses.SandboxSolanaPool[0] + "\n" + addresses.SandboxSolanaPool[1] + "\nnot-a-key\n"
	if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "pool", "import", "--network", "solana", bad); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("bad line: %v", err)
	}
	out, _, err := runCLI(t, "pool", "count", "--network", "solana")
	if err != nil || !strings.Contains(out, "0 solana pool addresses free") {
		t.Fatalf("a bad file imported something: %q %v", out, err)
	}
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte(strings.Join(addresses.SandboxSolanaPool[:5], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // importing twice adds nothing the second time
		if out, _, err = runCLI(t, "pool", "import", "--network", "solana", good); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(out, "0 keys imported") || !strings.Contains(out, "5 solana pool addresses free") {
		t.Fatalf("second import: %q", out)
	}
	if _, _, err := runCLI(t, "pool", "import", "--network", "bitcoin", good); err == nil {
		t.Fatal("bitcoin has no pool; the import must be refused")
	}
}

func TestEveryCommandExplainsItsFlags(t *testing.T) {
	out, _, err := runCLI(t, "--help")
	if err != nil || !strings.Contains(out, "serve") || !strings.Contains(out, "apikey") {
		t.Fatalf("help: %q %v", out, err)
	}
	for _, c := range [][]string{{"serve"}, {"migrate"}, {"status"}, {"rescan"}, {"apikey", "create"}, {"pool", "import"}} {
		_, errOut, err := runCLI(t, append(c, "--help")...)
		if err == nil || !strings.Contains(errOut, "Usage: paywatch "+c[0]) || !strings.Contains(errOut, "-config") {
			t.Errorf("%v --help: %q %v", c, errOut, err)
		}
	}
	if _, _, err := runCLI(t, "frobnicate"); err == nil {
		t.Fatal("unknown command accepted")
	}
}

// paywatch rescan applies the API's rule: from 0 to the scanned height + 1,
// never above the node's tip; out of range names the range and changes
// nothing.
func TestRescanCLIRefusesHeightsOutsideTheScannedRange(t *testing.T) {
	t.Setenv("PAYWATCH_DATABASE_URL", devnettest.Database(t))
	t.Setenv("PAYWATCH_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	ctx := context.Background()
	st, err := store.Open(ctx, os.Getenv("PAYWATCH_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := st.InitCursor(ctx, "litecoin", 100, "h100", now); err != nil {
		t.Fatal(err)
	}
	if err := st.InTx(ctx, func(tx *store.Tx) error { return tx.SetTips(ctx, "litecoin", 120, 110, now) }); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"102", "500", "-1"} {
		_, _, err := runCLI(t, "rescan", "--network", "litecoin", "--from", from)
		if err == nil || !strings.Contains(err.Error(), "between 0 and 101") {
			t.Fatalf("rescan --from %s with scanned height 100: %v", from, err)
		}
	}
	if c, err := st.GetCursor(ctx, "litecoin"); err != nil || c.RescanFrom != nil {
		t.Fatalf("a refused rescan was recorded: %+v %v", c, err)
	}
	if out, _, err := runCLI(t, "rescan", "--network", "litecoin", "--from", "101"); err != nil || !strings.Contains(out, "scheduled") {
		t.Fatalf("rescan --from 101: %q %v", out, err)
	}
	if c, err := st.GetCursor(ctx, "litecoin"); err != nil || c.RescanFrom == nil || *c.RescanFrom != 101 {
		t.Fatalf("rescan not recorded: %+v %v", c, err)
	}
}

// Issue 36 item 8: `paywatch` alone fails with the usage; each subcommand's
// --help shows its own flags and arguments, no other subcommand's; a
// resolve's help needs no transfer id; --version says what was built.
func TestCLIHelpIsEachCommandsOwn(t *testing.T) {
	out, errOut, err := runCLI(t)
	if err == nil || out != "" || !strings.Contains(errOut, "Usage: paywatch <command>") {
		t.Errorf("paywatch alone: out %q, stderr %q, err %v; want the usage on stderr and an error", out, errOut, err)
	}
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"apikey", "list"}, []string{"Usage: paywatch apikey list", "-config"}, []string{"-name", "-scope"}},
		{[]string{"apikey", "revoke"}, []string{"-name"}, []string{"-scope", "-account-prefix"}},
		{[]string{"apikey", "rotate"}, []string{"Usage: paywatch apikey rotate", "-name"}, []string{"-scope", "-store"}},
		{[]string{"stores", "list"}, []string{"Usage: paywatch stores list", "-json"}, []string{"-colour"}},
		{[]string{"stores", "create"}, []string{"Usage: paywatch stores create ID", "-colour", "-languages", "-return-hosts"}, []string{"-json"}},
		{[]string{"stores", "add-key"}, []string{"Usage: paywatch stores add-key ID NETWORK ACCOUNT_KEY"}, []string{"-colour", "-json"}},
		{[]string{"webhooks", "log"}, []string{"Usage: paywatch webhooks log", "-endpoint", "-limit"}, []string{"-from-seq"}},
		{[]string{"webhooks", "redeliver"}, []string{"-endpoint", "-from-seq"}, []string{"-limit"}},
		{[]string{"webhooks", "endpoints"}, []string{"-config"}, []string{"-endpoint", "-limit", "-from-seq"}},
		{[]string{"sessions", "end"}, []string{"Usage: paywatch sessions end", " ID", "cs_"}, nil},
		{[]string{"transfers", "resolve"}, []string{"Usage: paywatch transfers resolve ID", "-action", "-note"}, []string{"needs the transfer id"}},
		{[]string{"transfers", "list"}, []string{"-status", "-classification"}, []string{"-action"}},
	} {
		_, errOut, err := runCLI(t, append(c.args, "--help")...)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%v --help: err %v, want flag.ErrHelp (exit 0)", c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v --help does not show %q:\n%s", c.args, w, errOut)
			}
		}
		for _, n := range c.not {
			if strings.Contains(errOut, n) {
				t.Errorf("%v --help shows %q, another command's:\n%s", c.args, n, errOut)
			}
		}
	}
	out, _, err = runCLI(t, "--version")
	if err != nil || !strings.HasPrefix(out, "paywatch ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %q %v", out, err)
	}
}
