package config_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// ownKey is an account key of no public mnemonic: m/44'/60'/0' of the
// seed sha256("paywatch config tests").
const ownKey = "xpub6D37o6Lxq1kWj8iNwicS83WQCN3886LXT63UyPvAqjG6ingjFXdLvDU2tkqeEQ8F7yX3RkuotTzQHb6jDcGiMqQbpU6Hp7JkYnXyVAcHj9g"

// mainnetWith is a mainnet Ethereum config with one line changed.
func mainnetWith(old, new string) string {
	y := fmt.Sprintf(`
database_url: postgres://u@127.0.0.1/pw
rates: {sources: [coinbase, kraken]}
console: {signin_links: false}
networks:
  ethereum: {enabled: true, chain: mainnet, rpc_url: "https://eth.example", account_key: %q}
methods:
  ETH: {enabled: true}
`, ownKey)
	return strings.Replace(y, old, new, 1)
}

// A network on mainnet refuses the sandbox's settings: a public test key
// (matched by fingerprint, whatever its encoding), static rates and one-time
// sign-in links. The error names the field, the key, and says why. The
// same settings pass on regtest, and on a mainnet network that is off.
func TestMainnetRefusesTestSettings(t *testing.T) {
	if _, err := config.Parse(strings.NewReader(mainnetWith("", "")), env(nil)); err != nil {
		t.Fatalf("a production mainnet config: %v", err)
	}
	// Plain cookies on loopback (a proxy on this host adds TLS) are fine.
	if _, err := config.Parse(strings.NewReader(mainnetWith("console: {signin_links: false}", "console: {secure_cookies: false}")), env(nil)); err != nil {
		t.Fatalf("secure_cookies: false on loopback: %v", err)
	}
	sandboxETH := addresses.SandboxKeys[payment.Ethereum]
	cases := []struct {
		name, old, new string
		want           []string
		// elsewhere, when set, is what the same config says on regtest and
		// testnet (a zpub is a Bitcoin key whatever the chain: issue 36).
		elsewhere string
	}{
		{"the sandbox's Ethereum key", ownKey, sandboxETH,
			[]string{"networks.ethereum.account_key", "m/44'/60'/0'", "test test test", "public", "chain: mainnet"}, ""},
		{"the sandbox's Bitcoin mainnet key on Ethereum", ownKey, addresses.SandboxBitcoinMainnetKey,
			[]string{"networks.ethereum.account_key", "m/84'/0'/0'"}, "SegWit (BIP49/84) key"},
		{"static rates", "sources: [coinbase, kraken]", "sources: [coinbase, static], static: {ETH: \"3000\"}",
			[]string{"rates.sources", "static", "networks.ethereum", "mainnet"}, ""},
		{"sign-in links", "signin_links: false", "signin_links: true",
			[]string{"console.signin_links", "networks.ethereum", "mainnet"}, ""},
		{"plain cookies off loopback", "console: {signin_links: false}", "listen: 0.0.0.0:8080\nadmin_listen: api\nconsole: {secure_cookies: false}",
			[]string{"console.secure_cookies", "0.0.0.0:8080", "not loopback", "mainnet"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := mainnetWith(c.old, c.new)
			_, err := config.Parse(strings.NewReader(y), env(nil))
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, other := range []string{"regtest", "testnet"} {
				_, err := config.Parse(strings.NewReader(strings.Replace(y, "chain: mainnet", "chain: "+other, 1)), env(nil))
				if c.elsewhere != "" {
					if err == nil || !strings.Contains(err.Error(), c.elsewhere) {
						t.Errorf("the same on %s: %v, want %q", other, err, c.elsewhere)
					}
				} else if err != nil {
					t.Errorf("the same on %s: %v", other, err)
				}
			}
			off := strings.Replace(strings.Replace(y, "enabled: true, chain", "enabled: false, chain", 1), "ETH: {enabled: true}", "ETH: {enabled: false}", 1)
			if _, err := config.Parse(strings.NewReader(off), env(nil)); err != nil {
				t.Errorf("the same with the mainnet network off: %v", err)
			}
		})
	}
	// The key is matched whatever its version bytes: the Tron sandbox key
	// re-encoded as a zpub is still refused on a mainnet Tron network.
	zpub := reencode(t, addresses.SandboxKeys[payment.Tron], "04b24746")
	y := strings.Replace(strings.Replace(mainnetWith(ownKey, zpub), "ethereum:", "tron:", 1), "ETH:", "TRX:", 1)
	if _, err := config.Parse(strings.NewReader(y), env(nil)); err == nil || !strings.Contains(err.Error(), "networks.tron.account_key") ||
		!strings.Contains(err.Error(), "m/44'/195'/0'") {
		t.Fatalf("the Tron sandbox key as a zpub on mainnet: %v", err)
	}
}

// reencode returns key with other version bytes (hex).
func reencode(t *testing.T, key, version string) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(key)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := hex.DecodeString(version)
	if k, err = k.CloneWithVersion(v); err != nil {
		t.Fatal(err)
	}
	return k.String()
}

// Webhooks go over https, except to this host (a receiver beside the
// daemon): events are signed but not encrypted, and an http hop between
// hosts shows every payment to whoever is on the path.
func TestWebhookURLMustBeHTTPSOutsideLoopback(t *testing.T) {
	hook := "\nwebhooks:\n  - {name: shop, url: %q, secret_env: SHOP_SECRET, next_secret_env: SHOP_NEXT}\n"
	for _, ok := range []string{"https://shop.example/hook", "http://127.0.0.1:9000/hook", "http://localhost/hook", "http://[::1]:8000/h", "http://127.3.2.1/h"} {
		if _, err := config.Parse(strings.NewReader(valid+fmt.Sprintf(hook, ok)), env(nil)); err != nil {
			t.Errorf("webhook %s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://shop.example/hook", "http://10.0.0.7/hook", "http://localhost.shop.example/h", "ftp://shop.example/h"} {
		_, err := config.Parse(strings.NewReader(valid+fmt.Sprintf(hook, bad)), env(nil))
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "webhooks[0].url") || !strings.Contains(err.Error(), "https") {
			t.Errorf("webhook %s: %v, want an error naming webhooks[0].url and https", bad, err)
		}
	}
}

// Issue 36 item 8: an extended key of another coin or network is refused at
// load, naming the key: a testnet vpub on a mainnet litecoin, a Litecoin
// Ltub on bitcoin, an Ethereum xpub on a regtest bitcoin, a BIP84 zpub on
// tron; the right keys load.
func TestKeysOfAnotherCoinOrNetworkAreRefused(t *testing.T) {
	sb := addresses.SandboxKeys
	base := "listen: 127.0.0.1:8080\ndatabase_url: postgres://x@localhost/db\nnetworks:\n  %s: {enabled: true, chain: %s, rpc_url: \"http://u:p@127.0.0.1:1\", account_key: %q}\n"
	for _, c := range []struct {
		network, chain, key string
		want                string // "" loads
	}{
		{"litecoin", "mainnet", reencode(t, ownKey, "045f1cf6"), "testnet key"}, // vpub
		{"litecoin", "regtest", sb[payment.Litecoin], ""},
		{"bitcoin", "regtest", sb[payment.Litecoin], "Litecoin key"},
		{"bitcoin", "regtest", sb[payment.Ethereum], "mainnet key"},
		{"bitcoin", "regtest", sb[payment.Bitcoin], ""},
		{"bitcoin", "mainnet", reencode(t, ownKey, "045f1cf6"), "testnet key"},
		{"bitcoin", "mainnet", reencode(t, ownKey, "04b24746"), ""},              // zpub
		{"tron", "regtest", reencode(t, sb[payment.Tron], "04b24746"), "SegWit"}, // zpub
		{"tron", "regtest", sb[payment.Tron], ""},
		{"ethereum", "regtest", sb[payment.Ethereum], ""},
	} {
		y := fmt.Sprintf(base, c.network, c.chain, c.key)
		_, err := config.Parse(strings.NewReader(y), env(nil))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s on %s %s: %v", c.key[:4], c.chain, c.network, err)
			}
			continue
		}
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "networks."+c.network+".account_key") ||
			!strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.key[:4]) {
			t.Errorf("%s on %s %s: %v, want %q naming the key", c.key[:4], c.chain, c.network, err, c.want)
		}
	}
}
