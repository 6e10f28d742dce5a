package addresses

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// Every entry of the well-known table is recomputed from the public words:
// the table holds exactly the keys it claims, and every sandbox key is in it
// whatever its version bytes.
func TestWellKnownKeysAreThePublicMnemonicsKeys(t *testing.T) {
	if junk.words != junkMnemonic || abandon.words != abandonMnemonic {
		t.Fatal("the table's mnemonics are not the test vectors' words")
	}
	want := map[string]string{}
	for _, m := range []publicMnemonic{junk, abandon} {
		seed := bip39Seed(t, m.words, "")
		for _, p := range []uint32{44, 49, 84, 86} {
			for _, c := range []uint32{0, 1, 2, 60, 195} {
				for a := uint32(0); a < 5; a++ {
					path := fmt.Sprintf("m/%d'/%d'/%d'", p, c, a)
					for _, ver := range [][]byte{verXpub, verZpub, verTpub, verVpub, verLtub} {
						pub, err := privateAt(t, seed, h(p), h(c), h(a)).Neuter()
						if err != nil {
							t.Fatal(err)
						}
						if pub, err = pub.CloneWithVersion(ver); err != nil {
							t.Fatal(err)
						}
						desc, ok := WellKnownTestKey(pub.String())
						if !ok || !strings.HasPrefix(desc, path+" of the "+m.name) || !strings.Contains(desc, m.words) {
							t.Fatalf("%s of %q (version %x): WellKnownTestKey = %q, %v", path, m.name, ver, desc, ok)
						}
					}
					pub, _ := privateAt(t, seed, h(p), h(c), h(a)).Neuter()
					fp, _ := Fingerprint(pub.String())
					want[fp] = m.name + " " + path
				}
			}
		}
	}
	if len(wellKnownKeys) != len(want) {
		t.Fatalf("the table has %d keys, the mnemonics give %d", len(wellKnownKeys), len(want))
	}
	for fp, k := range wellKnownKeys {
		if want[fp] != k.mnemonic.name+" "+k.path {
			t.Errorf("table entry %s = %s %s, the mnemonic gives %q", fp, k.mnemonic.name, k.path, want[fp])
		}
	}
	for n, key := range SandboxKeys {
		if _, ok := WellKnownTestKey(key); !ok {
			t.Errorf("SandboxKeys[%s] is not well known", n)
		}
	}
	if _, ok := WellKnownTestKey(SandboxBitcoinMainnetKey); !ok {
		t.Error("SandboxBitcoinMainnetKey is not well known")
	}
	for _, k := range SandboxSolanaPool {
		if !WellKnownPoolKey(k) {
			t.Errorf("pool key %s is not well known", k)
		}
	}
}

// A key of a private seed is not well known, nor is garbage.
func TestPrivateSeedKeysAreNotWellKnown(t *testing.T) {
	seed := sha256.Sum256([]byte("paywatch addresses well-known test"))
	k, err := hdkeychain.NewMaster(seed[:], &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{h(44), h(60), h(0)} {
		if k, err = k.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	pub, _ := k.Neuter()
	for _, key := range []string{pub.String(), "", "xpub-garbage"} {
		if desc, ok := WellKnownTestKey(key); ok {
			t.Errorf("WellKnownTestKey(%q) = %q", key, desc)
		}
	}
	if WellKnownPoolKey("11111111111111111111111111111111") {
		t.Error("the system program is a well-known pool key")
	}
}
