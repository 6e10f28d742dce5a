package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
)

func TestCheckoutConfigNamesTheField(t *testing.T) {
	cases := []struct {
		name, yaml, field string
	}{
		{"enabled without a base URL", "checkout: {enabled: true}", "checkout.public_base_url"},
		{"base URL with a query", `checkout: {public_base_url: "https://pay.example.com/?a=1"}`, "checkout.public_base_url"},
		{"base URL with credentials", `checkout: {public_base_url: "https://u:p@pay.example.com"}`, "checkout.public_base_url"},
		{"base URL not http", `checkout: {public_base_url: "ftp://pay.example.com"}`, "checkout.public_base_url"},
		{"secret env empty", `checkout: {secret_env: ""}`, "checkout.secret_env"},
		{"secret env not a name", `checkout: {secret_env: "A B"}`, "checkout.secret_env"},
		{"return host with a scheme", `checkout: {return_hosts: ["https://shop.example.com"]}`, "checkout.return_hosts[0]"},
		{"return host with a path", `checkout: {return_hosts: [shop.example.com, "shop.example.com/x"]}`, "checkout.return_hosts[1]"},
		{"return host upper case", `checkout: {return_hosts: [Shop.Example.com]}`, "checkout.return_hosts[0]"},
		{"renew URL not http", `checkout: {renew_url: "javascript:alert(1)"}`, "checkout.renew_url"},
		{"contact URL javascript", `checkout: {contact_url: "javascript:alert(1)"}`, "checkout.contact_url"},
		{"frame ancestor with a path", `checkout: {frame_ancestors: ["https://shop.example.com/x"]}`, "checkout.frame_ancestors[0]"},
		{"frame ancestor injecting a directive", `checkout: {frame_ancestors: ["https://a.example; script-src *"]}`, "checkout.frame_ancestors[0]"},
		{"frame ancestor without scheme", `checkout: {frame_ancestors: ["shop.example.com"]}`, "checkout.frame_ancestors[0]"},
		{"short link lifetime", `checkout: {link_lifetime: 1s}`, "checkout.link_lifetime"},
		{"rate too low", `checkout: {requests_per_minute: 1}`, "checkout.requests_per_minute"},
		{"no live connections", `checkout: {max_live: 0}`, "checkout.max_live"},
		{"per-client cap above the total", `checkout: {max_live: 5, max_live_per_client: 6}`, "checkout.max_live_per_client"},
		{"no live connection per page", `checkout: {max_live_per_page: 0}`, "checkout.max_live_per_page"},
		{"busy progress", `checkout: {progress_interval: 1ms}`, "checkout.progress_interval"},
		{"bad proxy", `checkout: {trusted_proxies: ["10.0.0.0/33"]}`, "checkout.trusted_proxies[0]"},
		{"name too long", `checkout: {storefront_name: "` + strings.Repeat("x", 101) + `"}`, "checkout.storefront_name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(valid+"\n"+c.yaml+"\n"), env(nil))
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %q does not name %q", err, c.field)
			}
		})
	}
}

func TestCheckoutConfigAccepts(t *testing.T) {
	y := valid + `
checkout:
  enabled: true
  public_base_url: "https://pay.example.com/shop"
  storefront_name: "Example Shop"
  return_hosts: [shop.example.com, "*.example.org", "localhost:3000", "127.0.0.1", "[::1]:8080"]
  renew_url: "https://shop.example.com/{kind}s/{reference}/pay"
  contact_url: "mailto:help@shop.example.com"
  frame_ancestors: ["https://shop.example.com", "https://*.example.org:8443", "http://[::1]:3000"]
  trusted_proxies: [10.0.0.0/8, "::1", 192.168.1.7]
`
	c, err := config.Parse(strings.NewReader(y), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Checkout.Enabled || len(c.Checkout.ReturnHosts) != 5 || c.Checkout.LinkLifetime.Hours() != 720 {
		t.Fatalf("checkout: %+v", c.Checkout)
	}
}

// On mainnet the page must be reached over https (or on loopback, behind a
// proxy on the same host).
func TestCheckoutOverHTTPOnMainnet(t *testing.T) {
	base := strings.Replace(valid, "chain: regtest", "chain: mainnet", 1)
	base = strings.Replace(base, "rates: {sources: [static], min_sources: 1, static: {BTC: \"50000\"}}", "rates: {sources: [coinbase, kraken]}", 1)
	for _, c := range []struct {
		url string
		ok  bool
	}{{"http://pay.example.com", false}, {"https://pay.example.com", true}, {"http://127.0.0.1:8080", true}, {"http://localhost:8080", true}} {
		y := base + "\ncheckout: {enabled: true, public_base_url: \"" + c.url + "\"}\n"
		_, err := config.Parse(strings.NewReader(y), env(nil))
		if c.ok && err != nil {
			t.Errorf("%s refused: %v", c.url, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "checkout.public_base_url")) {
			t.Errorf("%s on mainnet: %v", c.url, err)
		}
	}
	// Regtest: plain http is the sandbox's.
	if _, err := config.Parse(strings.NewReader(valid+"\ncheckout: {enabled: true, public_base_url: \"http://pay.example.com\"}\n"), env(nil)); err != nil {
		t.Errorf("regtest over http: %v", err)
	}
}
