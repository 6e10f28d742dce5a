package main

import (
	"crypto/ed25519"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto/keccak"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
)

// The Tron wallet is anvil's dev account 9: its address is 41 ‖ the
// Ethereum address anvil lists for that key (the sandbox's ETH payer).
func TestSandboxTronWalletIsAnvilAccount9(t *testing.T) {
	w := sandboxTronWallet()
	want := "41" + strings.ToLower(strings.TrimPrefix(sandboxEthPayer.Hex(), "0x"))
	if got := hex.EncodeToString(w.addr); got != want {
		t.Fatalf("Tron wallet %s, want %s (anvil account 9)", got, want)
	}
	if !strings.HasPrefix(w.Base58(), "T") || w.KeyHex() != sandboxTronKeyHex {
		t.Fatalf("base58 %s, key %s", w.Base58(), w.KeyHex())
	}
	if _, err := newTronWallet("abc"); err == nil {
		t.Fatal("a short key was accepted")
	}
}

// SLIP-0010's published ed25519 test vector 1, and BIP-39's vector 1
// (passphrase TREZOR), then a wallet's derivation end to end: the OneKey
// wallet's public test fixture for mnemonic "ridge connect …" lists the
// addresses of its Solana "BIP44 standard" accounts, m/44'/501'/i'/0'
// (the Phantom and Solflare path).
func TestSolanaDerivation(t *testing.T) {
	seed, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
	for _, c := range []struct {
		path []uint32
		want string
	}{
		{nil, "2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7"},
		{[]uint32{0}, "68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3"},
		{[]uint32{0, 1}, "b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2"},
		{[]uint32{0, 1, 2}, "92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9"},
		{[]uint32{0, 1, 2, 2}, "30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662"},
	} {
		if got := hex.EncodeToString(slip10Ed25519(seed, c.path...)); got != c.want {
			t.Errorf("SLIP-0010 m/%v: %s, want %s", c.path, got, c.want)
		}
	}
	if got := hex.EncodeToString(bip39Seed("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "TREZOR")); got !=
		"c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04" {
		t.Errorf("BIP-39 seed %s", got)
	}
	ridge := bip39Seed("ridge connect analyst barrel apology bracket steak drastic naive basket silver term", "")
	for i, want := range []string{"EPd2tKSywSyAvH2rSYmrK6MyRB4FN1x1DwRzUGMX9BDb", "5JESP5kEXCqg39mtTxyd78mYtitoCZgJ61EHVhGLtCwg"} {
		k := ed25519.NewKeyFromSeed(slip10Ed25519(ridge, 44, 501, uint32(i), 0))
		if got := solanaAddress(publicKey32(k)); got != want {
			t.Errorf("m/44'/501'/%d'/0': %s, want %s", i, got, want)
		}
	}
}

// The keypair file round-trips in solana-keygen's format, and a file whose
// halves do not match is refused.
func TestSolanaKeypairFile(t *testing.T) {
	k := sandboxSolanaWallet()
	path := filepath.Join(t.TempDir(), "k.json")
	if err := writeSolanaKeypair(path, k); err != nil {
		t.Fatal(err)
	}
	got, err := readSolanaKeypair(path)
	if err != nil || !got.Equal(k) {
		t.Fatalf("read back: %v", err)
	}
	bad := append(ed25519.PrivateKey(nil), k...)
	bad[40] ^= 1
	if err := writeSolanaKeypair(path, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := readSolanaKeypair(path); err == nil {
		t.Fatal("a keypair whose public half is wrong was accepted")
	}
	t.Logf("sandbox Solana wallet %s", solanaAddress(publicKey32(k)))
}

// The banner shows both wallets, their keys and the warning.
func TestBannerNamesTheWallets(t *testing.T) {
	env := sandboxEnv{envTronAddress: sandboxTronWallet().Base58(), envTronKey: sandboxTronKeyHex,
		envSolanaAddress: "oeYf6KAJkLYhBuR8CiGc6L4D4Xtfepr85fuDgA9kq96", envSolanaKeypair: "/x/.paywatch/solana-wallet.json",
		envSolanaMint: solanaAddress(sandboxSolanaMint())}
	var b strings.Builder
	printBanner(&b, &sandbox{env: env, relDir: ".paywatch"}, sandboxReady{}, 0)
	out := b.String()
	for _, want := range []string{"never send real money", sandboxTronWallet().Base58(), sandboxTronKeyHex,
		"1,000,000 TRX", "1,000,000,000 USDT-TRC20", "10,000 SOL", "/x/.paywatch/solana-wallet.json", env[envSolanaMint]} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}

// The Ethereum key the sandbox watches is m/44'/60'/1' of the test
// mnemonic, and none of its first addresses is one of anvil's funded dev
// accounts (m/44'/60'/0'/0/0..9), which deploy and receive the sandbox
// tokens: a fresh sandbox's inbox starts empty (issue 36 item 5).
func TestSandboxEthereumKeyIsApartFromTheDevAccounts(t *testing.T) {
	seed := pbkdf2Seed(t, testMnemonic)
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	at := func(path ...uint32) *hdkeychain.ExtendedKey {
		k := master
		for _, i := range path {
			if k, err = k.Derive(i); err != nil {
				t.Fatal(err)
			}
		}
		return k
	}
	const hard = hdkeychain.HardenedKeyStart
	pub, err := at(44+hard, 60+hard, 1+hard).Neuter()
	if err != nil {
		t.Fatal(err)
	}
	if pub.String() != sandboxEthereumKey {
		t.Fatalf("sandboxEthereumKey is not m/44'/60'/1': the mnemonic gives %s", pub.String())
	}
	dev := map[string]bool{}
	for i := uint32(0); i < 10; i++ {
		k, err := at(44+hard, 60+hard, hard, 0, i).ECPubKey()
		if err != nil {
			t.Fatal(err)
		}
		h := keccak.NewLegacyKeccak256()
		h.Write(k.SerializeUncompressed()[1:])
		dev[common.BytesToAddress(h.Sum(nil)[12:]).Hex()] = true
	}
	if !dev[ethdev.AnvilDevAccount.Hex()] || !dev[sandboxEthPayer.Hex()] {
		t.Fatalf("the dev accounts %v miss anvil's first or tenth", dev)
	}
	for _, key := range []string{sandboxEthereumKey, addresses.SandboxKeys[payment.Ethereum]} {
		d, err := addresses.NewDeriver(payment.Ethereum, key, addresses.Regtest)
		if err != nil {
			t.Fatal(err)
		}
		for i := uint32(0); i < 100; i++ {
			a, err := d.Derive(i)
			if err != nil {
				t.Fatal(err)
			}
			if dev[a.String] && key == sandboxEthereumKey {
				t.Fatalf("sandbox ETH address %d is the dev account %s", i, a.String)
			}
			if key != sandboxEthereumKey && i == 0 && !dev[a.String] {
				t.Fatalf("the test's dev accounts do not include SandboxKeys' index 0 %s", a.String)
			}
		}
	}
}

func pbkdf2Seed(t *testing.T, mnemonic string) []byte {
	t.Helper()
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seed
}
