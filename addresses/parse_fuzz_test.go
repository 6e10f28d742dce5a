package addresses

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

var fuzzChains = []string{Mainnet, Testnet, Regtest}

// FuzzParseAddress: a parsed address's String is canonical (it parses to
// the same key and prints itself), and the key is the watch key the
// chain's decoder would match (script, account bytes or public key).
func FuzzParseAddress(f *testing.F) {
	for _, name := range []string{"mainnet_getblock_v2_766390.json", "mainnet_getblock_v2_2383207.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		var blk struct {
			Tx []struct {
				Vout []struct {
					ScriptPubKey struct {
						Address   string   `json:"address"`
						Addresses []string `json:"addresses"`
					} `json:"scriptPubKey"`
				} `json:"vout"`
			} `json:"tx"`
		}
		if err := json.Unmarshal(b, &blk); err != nil {
			f.Fatal(err)
		}
		n := uint8(0)
		if bytes.Contains([]byte(name), []byte("2383207")) {
			n = 1
		}
		for _, tx := range blk.Tx {
			for _, o := range tx.Vout {
				for _, a := range append(o.ScriptPubKey.Addresses, o.ScriptPubKey.Address) {
					if a != "" {
						f.Add(n, uint8(0), a)
					}
				}
			}
		}
	}
	for _, a := range []string{"0x52908400098527886E0F7030069857D2E4169EE7", "0xde709f2102306220921060314715629080e2fb77", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		"41a614f803b6fd780986a42c78ec9c7f77e6ded13c", "11111111111111111111111111111111", "So11111111111111111111111111111111111111112", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"} {
		for n := uint8(0); n < 5; n++ {
			f.Add(n, uint8(0), a)
		}
	}
	f.Fuzz(func(t *testing.T, n, c uint8, s string) {
		network := payment.Networks[int(n)%len(payment.Networks)]
		chain := fuzzChains[int(c)%len(fuzzChains)]
		a, err := ParseAddress(network, chain, s)
		if err != nil {
			return
		}
		if len(a.Key) == 0 || a.String == "" {
			t.Fatalf("%s %s %q: empty key or string: %+v", network, chain, s, a)
		}
		back, err := ParseAddress(network, chain, a.String)
		if err != nil {
			t.Fatalf("%s %s: %q parsed, its canonical form %q does not: %v", network, chain, s, a.String, err)
		}
		if !bytes.Equal(back.Key, a.Key) || back.String != a.String {
			t.Fatalf("%s %s: %q → %x %q → %x %q", network, chain, s, a.Key, a.String, back.Key, back.String)
		}
		switch network {
		case payment.Ethereum, payment.Tron:
			if len(a.Key) != 20 {
				t.Fatalf("%s key of %d bytes", network, len(a.Key))
			}
		case payment.Solana:
			if len(a.Key) != 32 {
				t.Fatalf("solana key of %d bytes", len(a.Key))
			}
		default:
			if ScriptAddress(network, chain, a.Key) != a.String {
				t.Fatalf("script %x renders as %q, not %q", a.Key, ScriptAddress(network, chain, a.Key), a.String)
			}
		}
	})
}

// FuzzAccountKey: an extended key is refused or gives a deriver whose
// first address parses back to its own key; a NUL, newline or junk never
// yields a deriver.
func FuzzAccountKey(f *testing.F) {
	for n, k := range SandboxKeys {
		for i, m := range payment.Networks {
			if m == n {
				f.Add(uint8(i), k)
			}
		}
	}
	f.Add(uint8(0), "xpub\x00")
	f.Fuzz(func(t *testing.T, n uint8, key string) {
		network := payment.Networks[int(n)%len(payment.Networks)]
		if network == payment.Solana {
			return
		}
		d, err := NewDeriver(network, key, Regtest)
		if err != nil {
			return
		}
		a, err := d.Derive(0)
		if err != nil {
			t.Fatalf("derive 0: %v", err)
		}
		back, err := ParseAddress(network, Regtest, a.String)
		if err != nil || !bytes.Equal(back.Key, a.Key) {
			t.Fatalf("derived %q (%x) parses to %x: %v", a.String, a.Key, back.Key, err)
		}
	})
}
