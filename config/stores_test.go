package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// Keys of the stores' tests: account keys of seeds no wallet holds
// (sha256("paywatch store test a"), "b"), computed with hdkeychain.
const (
	storeKeyA      = "tpubDCSQ2aMyQRi9dBGxoG8Xx3FR93fHonMfvRCc8xtW97iD1FyZQxtEeLiasgr2RgpBbofCRZvkJTyjEcoD3K8isLrA49yPYCYYVVmkchmcBrz" // m/84'/1'/0'
	storeKeyB      = "tpubDCM3fYoVu75K7pyQkiBKWjbkFAseES1vDrSxKRKFKQCUzWVVXi647rqXMuDMW8TM8rza6jM4NNKbfJ9fc4kVr1DQTPAF9uGBR553JbwEnwU"
	storeKeyDepth2 = "tpubDBYTLjQYpzGMWAggct8auSKjgtjanoxLptAAMMUcEAHiwUGRA1KNxAhcMMJuuc2oUsR3crXRDMM4e3zhn7i1GhZmnqqox5Cv7pKzgFG5mF9" // m/84'/1'
	storeKeyPriv   = "tprv8fkMtAKjG42UjiFAucTwYdbJa29MeTAmM7bprSrCiqupAminna4eTr6ihb82icLWqXKrpT8qGaEe7RHqjHNUUsGhpAPE6TKdXwV6T7Lj6Bw"
	storeKeyEthA   = "xpub6BqhoJC5zmu2L6WT9ZDqQmZLdfKeSm3ssG2ta3vAR8d2vrHeQCWWeRvtTmZX96PMTANHJVL3U2YdAtaBeoaqHs3Pe1AwECwgdtzhyEZG38x"
)

// storesBase is a valid config of one regtest bitcoin network (the
// sandbox's key) and stores appended.
var storesBase = `
database_url: postgres://u@127.0.0.1/pw
rates: {sources: [static], min_sources: 1, static: {BTC: "50000"}}
networks:
  bitcoin: {enabled: true, chain: regtest, rpc_url: "http://u:p@127.0.0.1:18443", account_key: "` + addresses.SandboxKeys[payment.Bitcoin] + `"}
methods:
  BTC: {enabled: true}
checkout: {return_hosts: [pay.example.com]}
stores:
`

func TestStoresParse(t *testing.T) {
	y := storesBase + `
  - id: shop-a
    name: Shop A
    display_name: "GPU Rentals A"
    logo_url: https://a.example.com/logo.png
    colour: "#1a2b3c"
    languages: [en, de]
    return_hosts: [a.example.com, "*.a.example.com"]
    confirmations: {BTC: 3}
    tolerance_bps: 50
    networks: {bitcoin: {account_key: "` + storeKeyA + `"}}
  - id: shop-b
    networks: {bitcoin: {account_key: "` + storeKeyB + `"}}
  - id: default
    display_name: "The default shop"
    colour: "#000000"
`
	c, err := config.Parse(strings.NewReader(y), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Stores) != 3 {
		t.Fatalf("stores = %+v", c.Stores)
	}
	a := c.Stores[0]
	if a.ID != "shop-a" || a.Name != "Shop A" || a.Colour != "#1a2b3c" || len(a.Languages) != 2 || a.Confirmations[payment.BTC] != 3 ||
		a.ToleranceBPS == nil || *a.ToleranceBPS != 50 || a.Networks[payment.Bitcoin].AccountKey != storeKeyA {
		t.Fatalf("shop-a = %+v", a)
	}
	fp, err := c.CheckStoreKey("k", payment.Bitcoin, storeKeyB)
	if want, _ := addresses.Fingerprint(storeKeyB); err != nil || fp != want {
		t.Fatalf("CheckStoreKey = %q, %v; want %q", fp, err, want)
	}
}

func TestInvalidStoresNameTheKey(t *testing.T) {
	keyed := func(id, key string) string {
		return "\n  - id: " + id + "\n    networks: {bitcoin: {account_key: \"" + key + "\"}}\n"
	}
	cases := []struct{ name, stores, field string }{
		{"bad id", "\n  - id: Shop A\n", "stores[0].id"},
		{"empty id", "\n  - name: x\n", "stores[0].id"},
		{"duplicate id", "\n  - id: a\n  - id: a\n", "stores[1].id"},
		{"unknown key", "\n  - id: a\n    colour_: red\n", "stores[0].colour_"},
		{"bad colour", "\n  - id: a\n    colour: red\n", "stores[0].colour"},
		{"short colour", "\n  - id: a\n    colour: \"#fff\"\n", "stores[0].colour"},
		{"unknown language", "\n  - id: a\n    languages: [en, xx]\n", "stores[0].languages[1]"},
		{"bad return host", "\n  - id: a\n    return_hosts: [\"https://a.example.com/\"]\n", "stores[0].return_hosts[0]"},
		{"plain http logo", "\n  - id: a\n    logo_url: http://a.example.com/l.png\n", "stores[0].logo_url"},
		{"default with keys", keyed("default", storeKeyA), "stores[0].networks"},
		{"default with confirmations", "\n  - id: default\n    confirmations: {BTC: 3}\n", "stores[0].confirmations"},
		{"private key", keyed("a", storeKeyPriv), "stores[0].networks.bitcoin.account_key"},
		{"not account level", keyed("a", storeKeyDepth2), "stores[0].networks.bitcoin.account_key"},
		{"wrong chain", keyed("a", addresses.SandboxBitcoinMainnetKey), "stores[0].networks.bitcoin.account_key"},
		{"not a key", keyed("a", "xpubX"), "stores[0].networks.bitcoin.account_key"},
		{"the default store's key", keyed("a", addresses.SandboxKeys[payment.Bitcoin]), "stores[0].networks.bitcoin.account_key"},
		{"another store's key", keyed("a", storeKeyA) + keyed("b", storeKeyB) + keyed("c", storeKeyA), "stores[2].networks.bitcoin.account_key"},
		{"network not enabled", "\n  - id: a\n    networks: {ethereum: {account_key: \"" + storeKeyEthA + "\"}}\n", "stores[0].networks.ethereum.account_key"},
		{"unknown network", "\n  - id: a\n    networks: {ripple: {account_key: \"" + storeKeyA + "\"}}\n", "stores[0].networks.ripple"},
		{"solana key", "\n  - id: a\n    networks: {solana: {account_key: \"" + storeKeyA + "\"}}\n", "stores[0].networks.solana.account_key"},
		{"unknown method", "\n  - id: a\n    confirmations: {DOGE: 3}\n", "stores[0].confirmations.DOGE"},
		{"disabled method", "\n  - id: a\n    confirmations: {ETH: 3}\n", "stores[0].confirmations.ETH"},
		{"zero confirmations on bitcoin", "\n  - id: a\n    confirmations: {BTC: 0}\n", "stores[0].confirmations.BTC"},
		{"tolerance", "\n  - id: a\n    tolerance_bps: 5000\n", "stores[0].tolerance_bps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(storesBase+c.stores), env(nil))
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %q does not name %q", err, c.field)
			}
			if strings.Contains(err.Error(), "tprv8fkM") {
				t.Fatalf("error echoes the private key: %q", err)
			}
		})
	}
}
