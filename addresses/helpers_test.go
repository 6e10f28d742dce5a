package addresses

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"golang.org/x/text/unicode/norm"
)

// Well-known mnemonics used by the test vectors.
const (
	// abandonMnemonic is the BIP84/BIP86 test vector mnemonic.
	abandonMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
	// junkMnemonic is the Hardhat/Foundry (anvil) default mnemonic.
	junkMnemonic = "test test test test test test test test test test test junk"
)

// Public version bytes used to serialize test keys (SLIP-132, Litecoin).
var (
	verXpub = mustHex("0488b21e")
	verTpub = mustHex("043587cf")
	verZpub = mustHex("04b24746")
	verVpub = mustHex("045f1cf6")
	verLtub = mustHex("019da462")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// bip39Seed is the BIP39 seed of a mnemonic: PBKDF2-HMAC-SHA512, 2048
// rounds, salt "mnemonic"+passphrase, both NFKD-normalized.
func bip39Seed(t testing.TB, mnemonic, passphrase string) []byte {
	t.Helper()
	seed, err := pbkdf2.Key(sha512.New, norm.NFKD.String(mnemonic), []byte("mnemonic"+norm.NFKD.String(passphrase)), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// h is a hardened index.
func h(i uint32) uint32 { return i + hdkeychain.HardenedKeyStart }

// privateAt derives the private extended key at path from the seed. Only
// tests hold private keys.
func privateAt(t testing.TB, seed []byte, path ...uint32) *hdkeychain.ExtendedKey {
	t.Helper()
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range path {
		if k, err = k.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// publicAt is the neutered key at path serialized with version.
func publicAt(t testing.TB, mnemonic string, version []byte, path ...uint32) string {
	t.Helper()
	pub, err := privateAt(t, bip39Seed(t, mnemonic, ""), path...).Neuter()
	if err != nil {
		t.Fatal(err)
	}
	pub, err = pub.CloneWithVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	return pub.String()
}

// noEcho fails when msg contains any 12-character piece of secret.
func noEcho(t *testing.T, msg, secret string) {
	t.Helper()
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+12]) {
			t.Fatalf("error %q echoes part of the key", msg)
		}
	}
}
