package config_test

import (
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

const pooled = `
database_url: postgres://u@127.0.0.1/pw
rates: {sources: [static], min_sources: 1, static: {BTC: "50000", TRX: "0.1"}}
networks:
  bitcoin:
    enabled: true
    chain: regtest
    account_key: "xpubX"
    endpoints:
      - {name: own, url: "http://u:secretpw@127.0.0.1:18443"}
      - {name: rented, url: "https://btc.example/rpc", priority: 1, role: scan, headers_env: BTC_HEADERS, max_requests_per_second: 5, daily_budget: 50000}
      - {name: checker, url: "https://other.example/rpc", role: verify, headers_env: BTC_HEADERS}
methods:
  BTC: {enabled: true}
`

var pooledEnv = map[string]string{"BTC_HEADERS": "Authorization: Basic dTpw; X-Extra: 1"}

// Issue 33 item 1: the endpoints list resolves to typed endpoints with
// their defaults; rpc_url resolves to one endpoint.
func TestEndpointsResolve(t *testing.T) {
	c, err := config.Parse(strings.NewReader(pooled), env(pooledEnv))
	if err != nil {
		t.Fatal(err)
	}
	eps := c.Networks[payment.Bitcoin].Endpoints()
	if len(eps) != 3 {
		t.Fatalf("endpoints: %d", len(eps))
	}
	if eps[0].Name != "own" || eps[0].Role != config.RoleBoth || eps[0].Burst != 1 || eps[0].MaxRequestsPerSecond != 0 {
		t.Fatalf("own: %+v", eps[0])
	}
	if eps[1].Role != config.RoleScan || eps[1].Priority != 1 || eps[1].Burst != 5 || eps[1].DailyBudget != 50000 {
		t.Fatalf("rented: %+v", eps[1])
	}
	if eps[2].Role.Scans() {
		t.Fatal("a verify endpoint scans")
	}
	c, err = config.Parse(strings.NewReader(valid), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	one := c.Networks[payment.Bitcoin].Endpoints()
	if len(one) != 1 || one[0].Name != config.DefaultEndpointName || one[0].URL != "http://u:p@127.0.0.1:18443" || one[0].Role != config.RoleBoth {
		t.Fatalf("rpc_url: %+v", one)
	}
}

// Issue 33 item 1: bad endpoint values are refused at load, naming the
// key, and the error never holds the URL or a header's value.
func TestBadEndpointsAreRefusedNamingTheKey(t *testing.T) {
	ep := func(old, new string) string { return strings.Replace(pooled, old, new, 1) }
	cases := []struct {
		name, yaml string
		env        map[string]string
		key        string
	}{
		{"rpc_url and endpoints", ep("chain: regtest", `chain: regtest
    rpc_url: "http://u:p@127.0.0.1:1"`), pooledEnv, "networks.bitcoin.endpoints"},
		{"bad name", ep("name: own", "name: Own Node"), pooledEnv, "networks.bitcoin.endpoints[0].name"},
		{"duplicate name", ep("name: rented", "name: own"), pooledEnv, "networks.bitcoin.endpoints.own.name"},
		{"bad url", ep(`"https://btc.example/rpc"`, `"ftp://key123@btc.example"`), pooledEnv, "networks.bitcoin.endpoints.rented.url"},
		{"no credentials", ep(`"http://u:secretpw@127.0.0.1:18443"`, `"http://127.0.0.1:18443"`), pooledEnv, "networks.bitcoin.endpoints.own.url"},
		{"bad role", ep("role: scan", "role: read"), pooledEnv, "networks.bitcoin.endpoints.rented.role"},
		{"negative priority", ep("priority: 1", "priority: -1"), pooledEnv, "networks.bitcoin.endpoints.rented.priority"},
		{"negative rate", ep("max_requests_per_second: 5", "max_requests_per_second: -5"), pooledEnv, "networks.bitcoin.endpoints.rented.max_requests_per_second"},
		{"NaN rate", ep("max_requests_per_second: 5", "max_requests_per_second: .nan"), pooledEnv, "networks.bitcoin.endpoints.rented.max_requests_per_second"},
		{"negative burst", ep("daily_budget: 50000", "daily_budget: 50000, burst: -2"), pooledEnv, "networks.bitcoin.endpoints.rented.burst"},
		{"negative budget", ep("daily_budget: 50000", "daily_budget: -1"), pooledEnv, "networks.bitcoin.endpoints.rented.daily_budget"},
		{"budget unpaced", ep("max_requests_per_second: 5, ", ""), pooledEnv, "networks.bitcoin.endpoints.rented.max_requests_per_second"},
		{"key header on bitcoin", ep("headers_env: BTC_HEADERS, max", "api_key_env: BTC_KEY, max"), map[string]string{"BTC_KEY": "k", "BTC_HEADERS": "A: b"}, "networks.bitcoin.endpoints.rented.api_key_env"},
		{"headers unset", pooled, nil, "networks.bitcoin.endpoints.rented.headers_env"},
		{"headers garbled", pooled, map[string]string{"BTC_HEADERS": "Authorization Basic s3cretvalue"}, "networks.bitcoin.endpoints.rented.headers_env"},
		{"only verify", ep("role: scan", "role: verify") + "", pooledEnv, ""},
		{"cookie file", ep("chain: regtest", "chain: regtest\n    cookie_file: /x/.cookie"), pooledEnv, "networks.bitcoin.cookie_file"},
		{"unknown key", ep("priority: 1,", "priorty: 1,"), pooledEnv, "networks.bitcoin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(tc.yaml), env(tc.env))
			if tc.key == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("want an error naming %s, got %v", tc.key, err)
			}
			for _, secret := range []string{"secretpw", "key123", "s3cretvalue", "dTpw"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error quotes a secret: %v", err)
				}
			}
		})
	}
	// Every endpoint of role verify but none that scans.
	noScan := strings.NewReplacer("name: own,", "name: own, role: verify,", "role: scan", "role: verify").Replace(pooled)
	noScan = strings.Replace(noScan, `{name: own, url`, `{name: own, role: verify, url`, 1)
	if _, err := config.Parse(strings.NewReader(noScan), env(pooledEnv)); err == nil || !strings.Contains(err.Error(), "networks.bitcoin.endpoints: needs at least one endpoint of role scan") {
		t.Fatalf("no scanning endpoint: %v", err)
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := config.ParseHeaders("Authorization: Basic dTpw\nTRON-PRO-API-KEY: abc:def")
	if err != nil || len(h) != 2 || h[1] != [2]string{"TRON-PRO-API-KEY", "abc:def"} {
		t.Fatalf("%v %v", h, err)
	}
	for _, bad := range []string{"", ";", "Bad Name: x", "NoValue:", "x"} {
		if _, err := config.ParseHeaders(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Issue 33 item 5: networks.<n>.large_amount_usd parses to cents, a bad
// value is refused naming the key, and a network that sets it without a
// second endpoint to verify with is a warning (its large intents would be
// held), not a refusal.
func TestLargeAmountForASecondSource(t *testing.T) {
	y := strings.Replace(pooled, "    chain: regtest\n", "    chain: regtest\n    large_amount_usd: \"1000.50\"\n", 1)
	c, err := config.Parse(strings.NewReader(y), env(pooledEnv))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Networks[payment.Bitcoin].LargeAmount(); !ok || v != 100050 {
		t.Fatalf("LargeAmount = %d, %v; want 100050 cents", v, ok)
	}
	if w := c.VerifyWarnings(); len(w) != 0 {
		t.Fatalf("warnings with a verify endpoint: %q", w)
	}
	for _, bad := range []string{`"-5"`, `"0"`, `"abc"`, `"1.234"`} {
		yb := strings.Replace(pooled, "    chain: regtest\n", "    chain: regtest\n    large_amount_usd: "+bad+"\n", 1)
		_, err := config.Parse(strings.NewReader(yb), env(pooledEnv))
		if err == nil || !strings.Contains(err.Error(), "networks.bitcoin.large_amount_usd") {
			t.Errorf("large_amount_usd %s: %v, want an error naming networks.bitcoin.large_amount_usd", bad, err)
		}
	}
	one := strings.Replace(valid, `account_key: "xpubX"}`, `account_key: "xpubX", large_amount_usd: "500"}`, 1)
	c, err = config.Parse(strings.NewReader(one), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	w := c.VerifyWarnings()
	if len(w) != 1 || !strings.Contains(w[0], "networks.bitcoin.large_amount_usd") || !strings.Contains(w[0], "held") {
		t.Fatalf("warnings with one rpc_url: %q", w)
	}
	if c, err = config.Parse(strings.NewReader(valid), env(nil)); err != nil || len(c.VerifyWarnings()) != 0 {
		t.Fatalf("no large_amount_usd: %v %q", err, c.VerifyWarnings())
	}
}
