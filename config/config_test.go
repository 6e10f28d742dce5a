package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestExampleParsesToTheDefaults(t *testing.T) {
	f, err := os.Open("paywatch.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := config.Parse(f, env(nil))
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	d := config.Default()
	d.DatabaseURL = c.DatabaseURL
	// The example listens where a container's published port arrives; the
	// default is this host's loopback.
	if c.Listen != "0.0.0.0:8080" || d.Listen != "127.0.0.1:8080" {
		t.Fatalf("listen: example %q, default %q", c.Listen, d.Listen)
	}
	if c.Deadline != d.Deadline || c.Rates.Refresh != d.Rates.Refresh ||
		!reflect.DeepEqual(c.TopupAmounts, d.TopupAmounts) || c.MaxBodyBytes != d.MaxBodyBytes || c.Events != d.Events || c.Database != d.Database ||
		!reflect.DeepEqual(c.Checkout, d.Checkout) {
		t.Fatalf("example top-level settings differ from the defaults")
	}
	for name, m := range d.Methods {
		got := c.Methods[name]
		if *got.Confirmations != *m.Confirmations || *got.DisplayDecimals != *m.DisplayDecimals ||
			got.DustMin != m.DustMin || got.Contract != m.Contract || got.UnderpaymentTolerance != m.UnderpaymentTolerance {
			t.Errorf("methods.%s in the example differs from its default", name)
		}
	}
	for name, n := range d.Networks {
		got := c.Networks[name]
		if got.Gap != n.Gap || got.PollInterval != n.PollInterval || got.MaxLagBlocks != n.MaxLagBlocks ||
			got.SafetyDepth != n.SafetyDepth || got.Parallel != n.Parallel {
			t.Errorf("networks.%s in the example differs from its default", name)
		}
	}
}

// Every field of every config struct appears as a key in the example, so the
// example really lists every setting.
func TestExampleListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("paywatch.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	check := func(where string, typ reflect.Type, m map[string]any) {
		for i := 0; i < typ.NumField(); i++ {
			tag := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
			if !typ.Field(i).IsExported() || tag == "-" {
				continue // resolved by Validate, not a setting
			}
			if _, ok := m[tag]; !ok {
				t.Errorf("%s.%s is missing from the example", where, tag)
			}
		}
	}
	check("", reflect.TypeOf(config.Config{}), doc)
	check("rates", reflect.TypeOf(config.Rates{}), doc["rates"].(map[string]any))
	check("console", reflect.TypeOf(config.Console{}), doc["console"].(map[string]any))
	check("events", reflect.TypeOf(config.Events{}), doc["events"].(map[string]any))
	check("checkout", reflect.TypeOf(config.Checkout{}), doc["checkout"].(map[string]any))
	check("database", reflect.TypeOf(config.Database{}), doc["database"].(map[string]any))
	for name, m := range doc["methods"].(map[string]any) {
		check("methods."+name, reflect.TypeOf(config.Method{}), m.(map[string]any))
	}
	for name, n := range doc["networks"].(map[string]any) {
		check("networks."+name, reflect.TypeOf(config.Network{}), n.(map[string]any))
	}
	if len(doc["methods"].(map[string]any)) != 8 || len(doc["networks"].(map[string]any)) != 5 {
		t.Fatalf("the example must list the 8 methods and 5 networks")
	}
}

const valid = `
database_url: postgres://u@127.0.0.1/pw
rates: {sources: [static], min_sources: 1, static: {BTC: "50000"}}
networks:
  bitcoin: {enabled: true, chain: regtest, rpc_url: "http://u:p@127.0.0.1:18443", account_key: "xpubX"}
methods:
  BTC: {enabled: true}
`

func TestInvalidConfigNamesTheField(t *testing.T) {
	cases := []struct {
		name, yaml, field string
	}{
		{"unknown top-level key", valid + "\nlistn: x\n", "listn"},
		{"unknown method key", strings.Replace(valid, "BTC: {enabled: true}", "BTC: {enabled: true, confirmatons: 3}", 1), "methods.BTC"},
		{"unknown method", valid + "  DOGE: {enabled: true}\n", "methods.DOGE"},
		{"unknown network", strings.Replace(valid, "networks:\n", "networks:\n  ripple: {enabled: true}\n", 1), "networks.ripple"},
		{"zero confirmations on bitcoin", strings.Replace(valid, "BTC: {enabled: true}", "BTC: {enabled: true, confirmations: 0}", 1), "methods.BTC.confirmations"},
		// Issue 21 item 7: a large payment on a chain without finality
		// needs at least one confirmation too.
		{"zero large confirmations on bitcoin", strings.Replace(valid, "BTC: {enabled: true}", `BTC: {enabled: true, large_amount_usd: "1000.00", large_confirmations: 0}`, 1), "methods.BTC.large_confirmations"},
		{"negative large confirmations", strings.Replace(valid, "BTC: {enabled: true}", `BTC: {enabled: true, large_amount_usd: "1000.00", large_confirmations: -1}`, 1), "methods.BTC.large_confirmations"},
		{"too many large confirmations", strings.Replace(valid, "BTC: {enabled: true}", `BTC: {enabled: true, large_amount_usd: "1000.00", large_confirmations: 10001}`, 1), "methods.BTC.large_confirmations"},
		{"bad display decimals", strings.Replace(valid, "BTC: {enabled: true}", "BTC: {enabled: true, display_decimals: 9}", 1), "methods.BTC.display_decimals"},
		{"bad dust", strings.Replace(valid, "BTC: {enabled: true}", "BTC: {enabled: true, dust_min: \"-1\"}", 1), "methods.BTC.dust_min"},
		{"private key", strings.Replace(valid, "xpubX", "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi", 1), "networks.bitcoin.account_key"},
		{"method on a disabled network", strings.Replace(valid, "BTC: {enabled: true}", "BTC: {enabled: true}\n  LTC: {enabled: true}", 1), "methods.LTC.enabled"},
		{"bad rpc url", strings.Replace(valid, "http://u:p@127.0.0.1:18443", "127.0.0.1:18443", 1), "networks.bitcoin.rpc_url"},
		{"bad deadline", valid + "\ndeadline: 5s\n", "deadline"},
		{"bad duration", valid + "\ndeadline: soon\n", "soon"},
		{"bad topup", valid + "\ntopup_amounts: [\"100.001\"]\n", "topup_amounts[0]"},
		{"unknown rate source", strings.Replace(valid, "sources: [static]", "sources: [static, ftx]", 1), "rates.sources[1]"},
		{"missing database", strings.Replace(valid, "database_url: postgres://u@127.0.0.1/pw", "", 1), "database_url"},
		{"not a mapping", "- a\n- b\n", "mapping"},
		{"explorer without txid", valid + "\nconsole: {explorers: {bitcoin: \"https://mempool.space/tx/\"}}\n", "console.explorers.bitcoin"},
		{"explorer of an unknown network", valid + "\nconsole: {explorers: {ripple: \"https://x.example/{txid}\"}}\n", "console.explorers.ripple"},
		{"short console session", valid + "\nconsole: {session_ttl: 5s}\n", "console.session_ttl"},
		{"no waiters", valid + "\nevents: {max_waiters: 0}\n", "events.max_waiters"},
		{"per-key cap above the total", valid + "\nevents: {max_waiters: 10, max_waiters_per_key: 11}\n", "events.max_waiters_per_key"},
		{"busy event poll", valid + "\nevents: {poll_interval: 1ms}\n", "events.poll_interval"},
		{"unknown events key", valid + "\nevents: {max_waiter: 3}\n", "max_waiter"},
		{"internal_tx_probe not a txid", strings.Replace(valid, "networks:\n", "networks:\n  tron: {enabled: true, chain: regtest, rpc_url: \"http://127.0.0.1:8090\", account_key: \"xpubX\", internal_tx_probe: nope}\n", 1), "networks.tron.internal_tx_probe"},
		{"internal_tx_probe off tron", strings.Replace(valid, `account_key: "xpubX"}`, `account_key: "xpubX", internal_tx_probe: "`+strings.Repeat("ab", 32)+`"}`, 1), "networks.bitcoin.internal_tx_probe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(c.yaml), env(nil))
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %q does not name %q", err, c.field)
			}
			if strings.Contains(err.Error(), "xprv9s21") {
				t.Fatalf("error echoes the private key: %q", err)
			}
		})
	}
}

func TestEnvironmentOverridesSecrets(t *testing.T) {
	c, err := config.Parse(strings.NewReader(valid), env(map[string]string{
		"PAYWATCH_DATABASE_URL":    "postgres://other@db/pw",
		"PAYWATCH_BITCOIN_RPC_URL": "http://x:y@node:8332",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://other@db/pw" || c.Networks["bitcoin"].RPCURL != "http://x:y@node:8332" {
		t.Fatalf("overrides not applied: %q %q", c.DatabaseURL, c.Networks["bitcoin"].RPCURL)
	}
	if got := config.Redacted(c.Networks["bitcoin"].RPCURL); strings.Contains(got, "y@") {
		t.Fatalf("Redacted leaks the password: %s", got)
	}
	// Partial method settings merge over their defaults.
	if *c.Methods["BTC"].Confirmations != 2 || c.Methods["BTC"].DustMin != "0.00000546" {
		t.Fatalf("BTC defaults lost: %+v", c.Methods["BTC"])
	}
}

func TestLargeAmountConfirmations(t *testing.T) {
	y := strings.Replace(valid, "BTC: {enabled: true}", `BTC: {enabled: true, large_amount_usd: "10000.00", large_confirmations: 6}`, 1)
	c, err := config.Parse(strings.NewReader(y), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MethodConfirmations("BTC", 999999); got != 2 {
		t.Fatalf("9999.99 USD: %d confirmations, want 2", got)
	}
	if got := c.MethodConfirmations("BTC", 1000000); got != 6 {
		t.Fatalf("10000.00 USD: %d confirmations, want 6", got)
	}
}

// docker-compose.yml references only things that exist: the Dockerfile, the
// image's base config, and node and database URL names paywatch reads.
func TestDockerComposeReferencesExist(t *testing.T) {
	root := ".."
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Build *struct {
				Context    string `yaml:"context"`
				Dockerfile string `yaml:"dockerfile"`
			} `yaml:"build"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Command     []string          `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	pw, ok := compose.Services["paywatch"]
	if !ok || pw.Build == nil {
		t.Fatal("docker-compose.yml needs a paywatch service built from the repository")
	}
	if _, err := os.Stat(filepath.Join(root, pw.Build.Context, pw.Build.Dockerfile)); err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	// The config is the image's (deploy/docker/paywatch.yaml, which the
	// entrypoint completes from the environment: cmd/paywatch's
	// TestComposeEntrypointRunsTheStack runs it with this file's
	// environment).
	if _, err := os.Stat(filepath.Join(root, "deploy", "docker", "paywatch.yaml")); err != nil {
		t.Fatalf("the image's base config: %v", err)
	}
	// Every node URL and the database URL are variables config.Parse
	// honours (the others are the entrypoint's).
	for name := range pw.Environment {
		if name != "PAYWATCH_DATABASE_URL" && !(strings.HasPrefix(name, "PAYWATCH_") && strings.HasSuffix(name, "_RPC_URL")) {
			continue
		}
		c, err := config.Parse(strings.NewReader(valid), env(map[string]string{name: "http://probe:probe@probe:1"}))
		if name == "PAYWATCH_DATABASE_URL" {
			c, err = config.Parse(strings.NewReader(valid), env(map[string]string{name: "postgres://probe@probe/pw"}))
			if err != nil || c.DatabaseURL != "postgres://probe@probe/pw" {
				t.Errorf("%s is not honoured: %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		net := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(name, "PAYWATCH_"), "_RPC_URL"))
		if n, ok := c.Networks[payment.Network(net)]; !ok || n.RPCURL != "http://probe:probe@probe:1" {
			t.Errorf("%s is not read by paywatch", name)
		}
	}
}

func TestCookieFileOnlyForUTXONodes(t *testing.T) {
	y := strings.Replace(valid, `account_key: "xpubX"}`, `account_key: "xpubX", cookie_file: /var/lib/bitcoind/.cookie}`, 1)
	c, err := config.Parse(strings.NewReader(y), env(nil))
	if err != nil || c.Networks["bitcoin"].CookieFile != "/var/lib/bitcoind/.cookie" {
		t.Fatalf("bitcoin cookie_file: %v", err)
	}
	bad := strings.Replace(valid, "networks:\n", "networks:\n  tron: {cookie_file: /x}\n", 1)
	if _, err := config.Parse(strings.NewReader(bad), env(nil)); err == nil || !strings.Contains(err.Error(), "networks.tron.cookie_file") {
		t.Fatalf("tron cookie_file: %v", err)
	}
}

func TestWebhookStartIsChecked(t *testing.T) {
	hook := "\nwebhooks:\n  - {name: shop, url: \"https://shop.example/hook\", secret_env: SHOP_SECRET, start: %s}\n"
	for _, ok := range []string{"now", "beginning"} {
		if _, err := config.Parse(strings.NewReader(valid+fmt.Sprintf(hook, ok)), env(nil)); err != nil {
			t.Fatalf("start %s: %v", ok, err)
		}
	}
	_, err := config.Parse(strings.NewReader(valid+fmt.Sprintf(hook, "yesterday")), env(nil))
	if err == nil || !strings.Contains(err.Error(), "webhooks[0].start") {
		t.Fatalf("start yesterday: %v", err)
	}
}

// A webhook's store is a store id (issue 34 item 2).
func TestWebhookStoreIsChecked(t *testing.T) {
	hook := "\nwebhooks:\n  - {name: shop, url: \"https://shop.example/hook\", secret_env: SHOP_SECRET, store: %q}\n"
	c, err := config.Parse(strings.NewReader(valid+fmt.Sprintf(hook, "shop-b")), env(nil))
	if err != nil || c.Webhooks[0].Store != "shop-b" {
		t.Fatalf("store shop-b: %v", err)
	}
	for _, bad := range []string{"Shop B", "-b", strings.Repeat("b", 41)} {
		_, err := config.Parse(strings.NewReader(valid+fmt.Sprintf(hook, bad)), env(nil))
		if err == nil || !strings.Contains(err.Error(), "webhooks[0].store") {
			t.Errorf("store %q: %v", bad, err)
		}
	}
}

// Rates default to two sources; one source alone must be said explicitly.
func TestSingleRateSourceMustBeExplicit(t *testing.T) {
	if got := config.Default().Rates.MinSources; got != 2 {
		t.Fatalf("default rates.min_sources %d, want 2", got)
	}
	implicit := strings.Replace(valid, "min_sources: 1, ", "", 1)
	_, err := config.Parse(strings.NewReader(implicit), env(nil))
	if err == nil || !strings.Contains(err.Error(), "rates.min_sources") || !strings.Contains(err.Error(), "min_sources: 1") {
		t.Fatalf("one source without min_sources: %v, want an error naming rates.min_sources", err)
	}
	if _, err := config.Parse(strings.NewReader(valid), env(nil)); err != nil {
		t.Fatalf("one source with min_sources: 1: %v", err)
	}
}

// A primary and its standby are given as one multi-host URL; the database
// block refuses negative durations.
func TestDatabaseFailoverSettings(t *testing.T) {
	c, err := config.Parse(strings.NewReader(`database_url: "postgres://paywatch@db1:5432,db2:5432/paywatch?target_session_attrs=read-write"
database:
  probe_timeout: 2s
  retry_for: 20s
`), func(string) string { return "" })
	if err != nil {
		t.Fatalf("multi-host URL: %v", err)
	}
	if c.Database.ProbeTimeout.Duration != 2*time.Second || c.Database.RetryFor.Duration != 20*time.Second || c.Database.ConnectTimeout.Duration != 5*time.Second {
		t.Fatalf("database block: %+v", c.Database)
	}
	if _, err := config.Parse(strings.NewReader("database_url: postgres://a/b\ndatabase:\n  retry_for: -1s\n"), func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "database.retry_for") {
		t.Fatalf("negative retry_for: %v", err)
	}
}

// A wrong reconcile section is refused at load, naming the key, not when
// the daemon first schedules a run.
func TestReconcileSettingsAreChecked(t *testing.T) {
	env := func(string) string { return "" }
	c, err := config.Parse(strings.NewReader("database_url: postgres://a/b\nreconcile:\n  schedule: \"@every 5m\"\n  blocks: 50\n  rate_per_second: 2.5\n"), env)
	if err != nil || c.Reconcile.Schedule != "@every 5m" || c.Reconcile.Blocks != 50 || c.Reconcile.RatePerSecond != 2.5 {
		t.Fatalf("valid reconcile section: %+v %v", c.Reconcile, err)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"schedule: \"every hour\"", "reconcile.schedule"},
		{"blocks: -1", "reconcile.blocks"},
		{"max_blocks: 10\n  blocks: 20", "reconcile.blocks"},
		{"sample_addresses: -5", "reconcile.sample_addresses"},
		{"rate_per_second: -1", "reconcile.rate_per_second"},
		{"rate_per_second: .nan", "reconcile.rate_per_second"},
		{"rate_per_second: 1e9", "reconcile.rate_per_second"},
	} {
		_, err := config.Parse(strings.NewReader("database_url: postgres://a/b\nreconcile:\n  "+tc.yaml+"\n"), env)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("reconcile %q: %v, want an error naming %s", tc.yaml, err, tc.key)
		}
	}
}

func TestLimitsAreChecked(t *testing.T) {
	env := func(string) string { return "" }
	c, err := config.Parse(strings.NewReader("database_url: postgres://a/b\n"), env)
	if err != nil || c.Limits.OpenIntentsPerPayable != 4 || c.Limits.CreatesPerMinute != 120 || c.Limits.CreateBurst != 60 {
		t.Fatalf("default limits: %+v %v", c.Limits, err)
	}
	c, err = config.Parse(strings.NewReader("database_url: postgres://a/b\nlimits:\n  open_intents_per_payable: 0\n"), env)
	if err != nil || c.Limits.OpenIntentsPerPayable != 0 {
		t.Fatalf("open_intents_per_payable: 0 (no cap): %+v %v", c.Limits, err)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"open_intents_per_payable: -1", "limits.open_intents_per_payable"},
		{"open_intents_per_payable: 1001", "limits.open_intents_per_payable"},
		{"creates_per_minute: -1", "limits.creates_per_minute"},
		{"create_burst: 0", "limits.create_burst"},
	} {
		_, err := config.Parse(strings.NewReader("database_url: postgres://a/b\nlimits:\n  "+tc.yaml+"\n"), env)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("limits %q: %v, want an error naming %s", tc.yaml, err, tc.key)
		}
	}
}

// Issue 36 item 8: a bad value is reported at its own line of the file (it
// was the line in a re-encoded copy of its section: a bad value at line 40
// read as line 5), and an unknown key gets a clear message with its line
// and the known keys, not yaml's raw "field … not found in type".
func TestConfigErrorsNameTheirLine(t *testing.T) {
	head := "listen: 127.0.0.1:8080\ndatabase_url: postgres://x@localhost/db\n"
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"a bad duration deep in a network", head + "networks:\n  bitcoin:\n    enabled: false\n" + strings.Repeat("\n", 30) + "    poll_interval: 5 seconds\n",
			[]string{"networks.bitcoin", "line 36:", `"5 seconds" is not a duration`}},
		{"a bad integer in a method", head + "methods:\n  BTC:\n\n\n    confirmations: many\n",
			[]string{"methods.BTC", "line 7:", "many"}},
		{"an unknown top-level key", head + "\n\ndeadlin: 30m\n",
			[]string{"line 5:", "deadlin: unknown field", "deadline"}},
		{"an unknown key in a network", head + "networks:\n  bitcoin:\n    enabled: false\n    pol_interval: 5s\n",
			[]string{"networks.bitcoin", "line 6:", "pol_interval: unknown field", "poll_interval"}},
		{"an unknown key in a section", head + "console:\n  enabled: true\n  sesion_ttl: 1h\n",
			[]string{"line 5:", "console.sesion_ttl: unknown field", "session_ttl"}},
		{"a bad value in a section", head + "database:\n\n  probe_interval: often\n",
			[]string{"line 5:", `"often" is not a duration`}},
	} {
		_, err := config.Parse(strings.NewReader(c.body), func(string) string { return "" })
		if err == nil || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%s: %v, want invalid", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "not found in type") || strings.Contains(err.Error(), "unmarshal errors") {
			t.Errorf("%s: a raw YAML error: %q", c.name, err)
		}
	}
}
