package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Account keys of seeds no wallet holds (sha256("paywatch store test a"),
// "b"), m/84'/1'/0'.
const (
	storeKeyA    = "tpubDCSQ2aMyQRi9dBGxoG8Xx3FR93fHonMfvRCc8xtW97iD1FyZQxtEeLiasgr2RgpBbofCRZvkJTyjEcoD3K8isLrA49yPYCYYVVmkchmcBrz"
	storeKeyB    = "tpubDCM3fYoVu75K7pyQkiBKWjbkFAseES1vDrSxKRKFKQCUzWVVXi647rqXMuDMW8TM8rza6jM4NNKbfJ9fc4kVr1DQTPAF9uGBR553JbwEnwU"
	storeKeyPriv = "tprv8fkMtAKjG42UjiFAucTwYdbJa29MeTAmM7bprSrCiqupAminna4eTr6ihb82icLWqXKrpT8qGaEe7RHqjHNUUsGhpAPE6TKdXwV6T7Lj6Bw"
)

// storesConfig writes a config of a regtest bitcoin and solana over a new
// database and points PAYWATCH_CONFIG at it.
func storesConfig(t *testing.T) *store.Store {
	t.Helper()
	url := devnettest.Database(t)
	path := filepath.Join(t.TempDir(), "paywatch.yaml")
	body := `database_url: "` + url + `"
rates: {sources: [static], min_sources: 1, static: {BTC: "50000", SOL: "150"}}
networks:
  bitcoin: {enabled: true, chain: regtest, rpc_url: "http://u:p@127.0.0.1:18443", account_key: "` + addresses.SandboxKeys[payment.Bitcoin] + `"}
  solana: {enabled: true, chain: regtest, rpc_url: "http://127.0.0.1:8899"}
methods:
  BTC: {enabled: true}
  SOL: {enabled: true}
`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAYWATCH_CONFIG", path)
	t.Setenv("PAYWATCH_DATABASE_URL", "")
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStoresCreateAddKeyAndList(t *testing.T) {
	st := storesConfig(t)
	ctx := context.Background()
	mustFail := func(want string, args ...string) {
		t.Helper()
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: %v, want an error saying %q", args, err, want)
		}
	}
	out, _, err := runCLI(t, "stores", "create", "shop-b", "--name", "Shop B", "--display-name", "GPU Rentals B", "--colour", "#0b6e4f",
		"--languages", "en,de", "--return-hosts", "b.example.com", "--confirmations", "BTC=3", "--tolerance-bps", "50")
	if err != nil || !strings.Contains(out, "created store shop-b") {
		t.Fatalf("create: %q %v", out, err)
	}
	sh, err := st.Shop(ctx, "shop-b")
	if err != nil || sh.Name != "Shop B" || sh.DisplayName != "GPU Rentals B" || sh.Colour != "#0b6e4f" || strings.Join(sh.Languages, ",") != "en,de" ||
		strings.Join(sh.ReturnHosts, ",") != "b.example.com" || sh.Settings.Confirmations["BTC"] != 3 || *sh.Settings.ToleranceBPS != 50 {
		t.Fatalf("stored: %+v %v", sh, err)
	}
	mustFail("exists already", "stores", "create", "shop-b")
	mustFail("exists always", "stores", "create", "default")
	mustFail("store shop-c.colour", "stores", "create", "shop-c", "--colour", "green")
	mustFail("store shop-c.languages[0]", "stores", "create", "shop-c", "--languages", "xx")
	mustFail("store shop-c.confirmations.ETH", "stores", "create", "shop-c", "--confirmations", "ETH=3")
	mustFail("store Shop-C.id", "stores", "create", "Shop-C")
	if _, err := st.Shop(ctx, "shop-c"); err != store.ErrNotFound {
		t.Fatalf("a refused create made shop-c: %v", err)
	}

	out, _, err = runCLI(t, "stores", "add-key", "shop-b", "bitcoin", storeKeyA)
	fpA, _ := addresses.Fingerprint(storeKeyA)
	if err != nil || !strings.Contains(out, fpA) {
		t.Fatalf("add-key: %q %v", out, err)
	}
	if out, _, err = runCLI(t, "stores", "add-key", "shop-b", "bitcoin", storeKeyA); err != nil || !strings.Contains(out, "already") {
		t.Fatalf("the same key again: %q %v", out, err)
	}
	mustFail("change owner", "stores", "add-key", "shop-b", "bitcoin", storeKeyB)
	if _, _, err := runCLI(t, "stores", "create", "shop-c"); err != nil {
		t.Fatal(err)
	}
	mustFail("another store's key", "stores", "add-key", "shop-c", "bitcoin", storeKeyA)
	mustFail("the default store's key", "stores", "add-key", "shop-c", "bitcoin", addresses.SandboxKeys[payment.Bitcoin])
	mustFail("PRIVATE", "stores", "add-key", "shop-c", "bitcoin", storeKeyPriv)
	mustFail("not enabled", "stores", "add-key", "shop-c", "ethereum", storeKeyB)
	mustFail("pool import --store", "stores", "add-key", "shop-c", "solana", storeKeyB)
	mustFail("no store", "stores", "add-key", "nope", "bitcoin", storeKeyB)
	mustFail("networks.<network>.account_key", "stores", "add-key", "default", "bitcoin", storeKeyB)
	keys, err := st.ShopKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Store != "shop-b" {
		t.Fatalf("keys: %+v %v", keys, err)
	}

	pool := filepath.Join(t.TempDir(), "pool.txt")
	if err := os.WriteFile(pool, []byte(strings.Join(addresses.SandboxSolanaPool[10:13], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLI(t, "pool", "import", "--network", "solana", "--store", "shop-b", pool)
	if err != nil || !strings.Contains(out, "3 keys imported") || !strings.Contains(out, "3 solana pool addresses free in store shop-b") {
		t.Fatalf("pool import --store: %q %v", out, err)
	}
	var lane string
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT min(lane), count(*) FROM free_addresses WHERE network = 'solana'`).Scan(&lane, &n); err != nil || lane != "pool:shop-b" || n != 3 {
		t.Fatalf("free addresses: lane %q, %d, %v", lane, n, err)
	}
	if out, _, err = runCLI(t, "pool", "count", "--network", "solana"); err != nil || !strings.Contains(out, "0 solana pool addresses free") {
		t.Fatalf("the default store's pool: %q %v", out, err)
	}
	mustFail("another store's address", "pool", "import", "--network", "solana", "--store", "shop-c", pool)
	mustFail("no store", "pool", "import", "--network", "solana", "--store", "nope", pool)

	out, _, err = runCLI(t, "stores", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STORE", "default", "shop-b", "Shop B", "key " + fpA, "pool: 3 free", "shop-c"} {
		if !strings.Contains(out, want) {
			t.Fatalf("stores list lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^shop-c\s+shop-c\s+bitcoin\s+none\s+\S`).MatchString(out) {
		t.Fatalf("shop-c's bitcoin row:\n%s", out)
	}
	out, _, err = runCLI(t, "stores", "list", "--json")
	var doc struct {
		Stores []struct {
			ID       string `json:"id"`
			Networks []struct{ Network, Source, Health string }
		} `json:"stores"`
	}
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Stores) != 3 || doc.Stores[1].ID != "shop-b" ||
		len(doc.Stores[1].Networks) != 2 || doc.Stores[1].Networks[0].Source != "key "+fpA || doc.Stores[1].Networks[1].Health == "" {
		t.Fatalf("stores list --json: %v\n%s", err, out)
	}
	if strings.Contains(out, storeKeyA) {
		t.Fatal("stores list prints the account key, not its fingerprint")
	}
}

func TestAPIKeyOfAStoreAndRotate(t *testing.T) {
	st := storesConfig(t)
	ctx := context.Background()
	if _, _, err := runCLI(t, "stores", "create", "shop-b"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "apikey", "create", "--scope", "storefront", "--name", "shop-b-front", "--store", "shop-b", "--account-prefix", "b:")
	if err != nil {
		t.Fatal(err)
	}
	old := strings.TrimSpace(out)
	k, err := st.APIKeyByPlain(ctx, old)
	if err != nil || k.Store != "shop-b" || k.AccountPrefix != "b:" || !k.HasScope("storefront") {
		t.Fatalf("store key: %+v %v", k, err)
	}
	if _, _, err := runCLI(t, "apikey", "create", "--scope", "storefront", "--name", "x", "--store", "nope"); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Fatalf("unknown store: %v", err)
	}
	// The existing commands keep working: an every-store key.
	if out, _, err = runCLI(t, "apikey", "create", "--scope", "operator", "--name", "ops"); err != nil {
		t.Fatal(err)
	}
	if k, err := st.APIKeyByPlain(ctx, strings.TrimSpace(out)); err != nil || k.Store != "" {
		t.Fatalf("operator key: %+v %v", k, err)
	}

	out, _, err = runCLI(t, "apikey", "rotate", "--name", "shop-b-front")
	if err != nil || !regexp.MustCompile(`^pw_[a-z2-7]{32}\n$`).MatchString(out) {
		t.Fatalf("rotate: %q %v", out, err)
	}
	if _, err := st.APIKeyByPlain(ctx, old); err != store.ErrNotFound {
		t.Fatalf("the old key after rotation: %v", err)
	}
	k, err = st.APIKeyByPlain(ctx, strings.TrimSpace(out))
	if err != nil || k.Name != "shop-b-front" || k.Store != "shop-b" || k.AccountPrefix != "b:" || strings.Join(k.Scopes, ",") != "storefront" {
		t.Fatalf("the new key: %+v %v", k, err)
	}
	if _, _, err := runCLI(t, "apikey", "rotate", "--name", "nope"); err == nil || !strings.Contains(err.Error(), "no active API key") {
		t.Fatalf("rotate unknown: %v", err)
	}
	out, _, err = runCLI(t, "apikey", "list")
	if err != nil || !regexp.MustCompile(`(?m)^shop-b-front\s.*\sshop-b$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^shop-b-front\.key_\S+\s.*\sshop-b$`).MatchString(out) || !strings.Contains(out, "every store") {
		t.Fatalf("apikey list:\n%s %v", out, err)
	}
}
