package addresses

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/payment"
)

func newDeriver(t testing.TB, n payment.Network, key, chain string) Deriver {
	t.Helper()
	d, err := NewDeriver(n, key, chain)
	if err != nil {
		t.Fatalf("NewDeriver(%s): %v", n, err)
	}
	return d
}

func derive(t testing.TB, d Deriver, i uint32) Address {
	t.Helper()
	a, err := d.Derive(i)
	if err != nil {
		t.Fatalf("Derive(%d): %v", i, err)
	}
	return a
}

// BIP84 test vectors: https://github.com/bitcoin/bips/blob/master/bip-0084.mediawiki#test-vectors
// (mnemonic "abandon … about", account 0 = m/84'/0'/0'; also quoted verbatim by
// SLIP-132's vector and by many wallets' test suites).
const (
	bip84AccountZpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	bip84Receive0    = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	bip84Receive1    = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
)

func TestBIP84Vectors(t *testing.T) {
	d := newDeriver(t, payment.Bitcoin, bip84AccountZpub, Mainnet)
	for i, want := range []string{bip84Receive0, bip84Receive1} {
		a := derive(t, d, uint32(i))
		if a.String != want || a.Index != int64(i) || a.Network != payment.Bitcoin {
			t.Errorf("index %d: got %+v, want %s", i, a, want)
		}
		if len(a.Key) != 22 || a.Key[0] != 0x00 || a.Key[1] != 0x14 {
			t.Errorf("index %d: key %x is not a P2WPKH script", i, a.Key)
		}
		p, err := ParseAddress(payment.Bitcoin, Mainnet, want)
		if err != nil || !bytes.Equal(p.Key, a.Key) || p.String != want || p.Index != -1 {
			t.Errorf("ParseAddress(%s) = %+v, %v; want key %x", want, p, err, a.Key)
		}
		if got := ScriptAddress(payment.Bitcoin, Mainnet, a.Key); got != want {
			t.Errorf("ScriptAddress(%x) = %q, want %q", a.Key, got, want)
		}
	}
	// The test helpers reproduce the published account key from the mnemonic.
	if got := publicAt(t, abandonMnemonic, verZpub, h(84), h(0), h(0)); got != bip84AccountZpub {
		t.Errorf("mnemonic gives %s, BIP84 publishes %s", got, bip84AccountZpub)
	}
	// The same account as xpub (other version bytes) derives the same addresses.
	xpub := publicAt(t, abandonMnemonic, verXpub, h(84), h(0), h(0))
	if a := derive(t, newDeriver(t, payment.Bitcoin, xpub, Mainnet), 0); a.String != bip84Receive0 {
		t.Errorf("xpub form derives %s, want %s", a.String, bip84Receive0)
	}
	// Other chains only change the human-readable part.
	for chain, prefix := range map[string]string{Testnet: "tb1q", Regtest: "bcrt1q"} {
		a := derive(t, newDeriver(t, payment.Bitcoin, bip84AccountZpub, chain), 0)
		want := derive(t, d, 0)
		if !strings.HasPrefix(a.String, prefix) || !bytes.Equal(a.Key, want.Key) {
			t.Errorf("%s: got %s %x, want prefix %s and key %x", chain, a.String, a.Key, prefix, want.Key)
		}
	}
}

// Hardhat/Foundry default accounts (anvil prints them at start; Hardhat docs
// "Hardhat Network" accounts list): mnemonic "test … junk", m/44'/60'/0'/0/i.
func TestEthereumVectors(t *testing.T) {
	xpub := publicAt(t, junkMnemonic, verXpub, h(44), h(60), h(0))
	d := newDeriver(t, payment.Ethereum, xpub, Mainnet)
	for i, want := range []string{"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"} {
		a := derive(t, d, uint32(i))
		if a.String != want || len(a.Key) != 20 || !strings.EqualFold(hex.EncodeToString(a.Key), want[2:]) {
			t.Errorf("index %d: got %s %x, want %s", i, a.String, a.Key, want)
		}
	}
}

// github.com/tboydston/hdAddressGenerator tests/settings.js + tests/coins/
// {ETH,TRX,LTC}.js (commits 403cd7e574b7…, 964a1d0dff05…), cross-checked there
// against iancoleman's BIP39 tool: mnemonic "brand improve … zero", no
// passphrase, BIP44 m/44'/60'/0'/0/i, m/44'/195'/0'/0/i and BIP84 m/84'/2'/0'/0/i.
func TestHDAddressGeneratorVectors(t *testing.T) {
	const mnemonic = "brand improve symbol strike say focus ginger imitate ginger appear wheel brand swear relief zero"
	cases := []struct {
		network payment.Network
		path    []uint32
		want    []string
	}{
		{payment.Ethereum, []uint32{h(44), h(60), h(0)}, []string{"0xAf5CBF39d271197b1453aD839876De9e54dBc4Ef", "0x171Fccc0634834F57d3E0dAdA0fa547042f4fd21"}},
		{payment.Tron, []uint32{h(44), h(195), h(0)}, []string{"TKP2mZrYNKdrXJi38vxQsAykfo1YoWjxpR", "TEj3nZiTniYrQQPDmjMuTF58cgJ2x2AT3P"}},
		{payment.Litecoin, []uint32{h(84), h(2), h(0)}, []string{"ltc1qwttt6kexkl8s3vczz3deqcn34elu0t6hmdfu6a", "ltc1qhy3neezv728lr0yyafa8mhsrcm93t0xg8ggcsc"}},
	}
	for _, c := range cases {
		d := newDeriver(t, c.network, publicAt(t, mnemonic, verXpub, c.path...), Mainnet)
		for i, want := range c.want {
			a := derive(t, d, uint32(i))
			if a.String != want {
				t.Errorf("%s index %d: got %s, want %s", c.network, i, a.String, want)
			}
			p, err := ParseAddress(c.network, Mainnet, want)
			if err != nil || !bytes.Equal(p.Key, a.Key) || p.String != want {
				t.Errorf("%s: ParseAddress(%s) = %+v, %v; want key %x", c.network, want, p, err, a.Key)
			}
		}
	}
}

func TestSandboxKeys(t *testing.T) {
	paths := map[payment.Network][]uint32{
		payment.Bitcoin:  {h(84), h(1), h(0)},
		payment.Litecoin: {h(84), h(2), h(0)},
		payment.Ethereum: {h(44), h(60), h(0)},
		payment.Tron:     {h(44), h(195), h(0)},
	}
	if len(SandboxKeys) != len(paths) {
		t.Fatalf("SandboxKeys has %d keys, want %d", len(SandboxKeys), len(paths))
	}
	for n, path := range paths {
		key, ok := SandboxKeys[n]
		if !ok {
			t.Fatalf("no sandbox key for %s", n)
		}
		want, err := parseAccountKey(publicAt(t, junkMnemonic, verXpub, path...))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseAccountKey(key)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if got.pub != want.pub || got.chain != want.chain || got.depth != 3 {
			t.Errorf("%s: sandbox key is not m/%v of the test mnemonic", n, path)
		}
	}
	main := publicAt(t, junkMnemonic, verZpub, h(84), h(0), h(0))
	if main != SandboxBitcoinMainnetKey {
		t.Errorf("SandboxBitcoinMainnetKey = %s, mnemonic gives %s", SandboxBitcoinMainnetKey, main)
	}
	// Index 0 of the ETH sandbox key is anvil's first account.
	if a := derive(t, newDeriver(t, payment.Ethereum, SandboxKeys[payment.Ethereum], Regtest), 0); a.String != "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" {
		t.Errorf("sandbox ETH index 0 = %s", a.String)
	}
	for n, prefix := range map[payment.Network]string{payment.Bitcoin: "bcrt1q", payment.Litecoin: "rltc1q", payment.Tron: "T"} {
		a := derive(t, newDeriver(t, n, SandboxKeys[n], Regtest), 7)
		p, err := ParseAddress(n, Regtest, a.String)
		if !strings.HasPrefix(a.String, prefix) || err != nil || !bytes.Equal(p.Key, a.Key) {
			t.Errorf("%s: %s does not round trip: %+v, %v", n, a.String, p, err)
		}
	}

	if len(SandboxSolanaPool) != 20 {
		t.Fatalf("SandboxSolanaPool has %d keys", len(SandboxSolanaPool))
	}
	for i, s := range SandboxSolanaPool {
		seed := sha256.Sum256([]byte("paywatch sandbox solana " + strconv.Itoa(i)))
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		if base58.Encode(pub) != s {
			t.Errorf("SandboxSolanaPool[%d] = %s, seed gives %s", i, s, base58.Encode(pub))
		}
	}
	pool, err := ParseSolanaPool(strings.NewReader(strings.Join(SandboxSolanaPool, "\n")))
	if err != nil || len(pool) != 20 {
		t.Fatalf("sandbox pool: %d keys, %v", len(pool), err)
	}
}

// Tron vectors of CHAINS.md §7 and its fixtures: USDT contract (CHAINS.md §4),
// USDT transfer 0af79242… (gettransactioninfobyid log topics, TWpZ… → TBA6…)
// and TRX transfer 979e0823… (getblockbynum 30864544 owner/to, TTma… → TJ4e…).
var tronVectors = []struct{ base58, hex string }{
	{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"},
	{"TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7", "41e4b8075df69297bc24cc4bbaf48cd17206e1f62c"},
	{"TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt", "410d0707963952f2fba59dd06f2b425ace40b492fe"},
	{"TTmaAAbFPtACn1amP3FBkmmUygFh8udAvA", "41c33eeefda1059afba41d86759e281bcb851edfc8"},
	{"TJ4eV1hnVAiFmeArBsuL6GkgTGVnWBe7eV", "4158c85b7b6a5118beb3b23c14fcb2f3551a81d79a"},
}

func TestTronVectors(t *testing.T) {
	for _, v := range tronVectors {
		raw, _ := hex.DecodeString(v.hex)
		if got := TronAddress(raw[1:]); got != v.base58 {
			t.Errorf("TronAddress(%s) = %s, want %s", v.hex, got, v.base58)
		}
		for _, in := range []string{v.base58, v.hex, strings.ToUpper(v.hex)} {
			acc, err := TronAccount(in)
			if err != nil || !bytes.Equal(acc, raw[1:]) {
				t.Errorf("TronAccount(%s) = %x, %v; want %x", in, acc, err, raw[1:])
			}
			a, err := ParseAddress(payment.Tron, Mainnet, in)
			if err != nil || a.String != v.base58 || !bytes.Equal(a.Key, raw[1:]) {
				t.Errorf("ParseAddress(tron, %s) = %+v, %v", in, a, err)
			}
		}
		// Flipping any one character breaks the checksum (or the alphabet).
		for i := 1; i < len(v.base58); i++ {
			b := []byte(v.base58)
			if b[i] == 'z' {
				b[i] = 'y'
			} else {
				b[i] = 'z'
			}
			if _, err := TronAccount(string(b)); !errors.Is(err, ErrInvalidAddress) {
				t.Errorf("TronAccount(%s) with char %d flipped: err %v", b, i, err)
			}
		}
	}
	for _, bad := range []string{
		"", "T", "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c", "a614f803b6fd780986a42c78ec9c7f77e6ded13c",
		"42a614f803b6fd780986a42c78ec9c7f77e6ded13c", "41a614f803b6fd780986a42c78ec9c7f77e6ded13", "41a614f803b6fd780986a42c78ec9c7f77e6ded1zz",
		base58.CheckEncode(make([]byte, 20), 0x42), base58.CheckEncode(make([]byte, 21), 0x41),
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
	} {
		if acc, err := TronAccount(bad); !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("TronAccount(%q) = %x, %v; want ErrInvalidAddress", bad, acc, err)
		}
	}
	if TronAddress(make([]byte, 19)) != "" {
		t.Error("TronAddress of 19 bytes is not empty")
	}
}

func TestLitecoin(t *testing.T) {
	// CHAINS.md §7, fixture mainnet_getblock_v2_2383207.json: P2SH output
	// a9148b5b26127e132bf460aa6e2812e52727965a1b9c87 displayed as MLc1MDduz8….
	script := mustHex("a9148b5b26127e132bf460aa6e2812e52727965a1b9c87")
	const m = "MLc1MDduz8VyGdjjo3i5M46Z9RXhy624Q2"
	legacy := base58.CheckEncode(script[2:22], 0x05) // the same hash in Litecoin's legacy 3… form
	if !strings.HasPrefix(legacy, "3") {
		t.Fatalf("legacy form %s", legacy)
	}
	for _, s := range []string{m, legacy} {
		a, err := ParseAddress(payment.Litecoin, Mainnet, s)
		if err != nil || !bytes.Equal(a.Key, script) || a.String != m {
			t.Errorf("ParseAddress(ltc, %s) = %+v, %v; want script %x shown as %s", s, a, err, script, m)
		}
	}
	if got := ScriptAddress(payment.Litecoin, Mainnet, script); got != m {
		t.Errorf("ScriptAddress = %s, want %s", got, m)
	}
	// On Bitcoin the same 3… string is a P2SH too, and M… is not an address.
	if a, err := ParseAddress(payment.Bitcoin, Mainnet, legacy); err != nil || !bytes.Equal(a.Key, script) {
		t.Errorf("bitcoin %s: %+v, %v", legacy, a, err)
	}
	if _, err := ParseAddress(payment.Bitcoin, Mainnet, m); !errors.Is(err, ErrInvalidAddress) {
		t.Errorf("bitcoin accepted %s: %v", m, err)
	}

	// Derived LTC addresses round trip on every chain with their own prefix.
	key := publicAt(t, abandonMnemonic, verLtub, h(84), h(2), h(0))
	for chain, prefix := range map[string]string{Mainnet: "ltc1q", Testnet: "tltc1q", Regtest: "rltc1q"} {
		d := newDeriver(t, payment.Litecoin, key, chain)
		for i := uint32(0); i < 3; i++ {
			a := derive(t, d, i)
			p, err := ParseAddress(payment.Litecoin, chain, a.String)
			if !strings.HasPrefix(a.String, prefix) || err != nil || !bytes.Equal(p.Key, a.Key) || ScriptAddress(payment.Litecoin, chain, a.Key) != a.String {
				t.Errorf("%s %d: %s does not round trip (%+v, %v)", chain, i, a.String, p, err)
			}
			if _, err := ParseAddress(payment.Bitcoin, chain, a.String); err == nil {
				t.Errorf("bitcoin accepted litecoin address %s", a.String)
			}
		}
	}

	// MWEB addresses are refused with a clear error, whatever their shape.
	for _, s := range []string{
		"ltcmweb1qq20e4wsq2sncd9k5r7tpcugwvvvj0kdg5xkupx7mrvzsm9jf6xyn5q3nhl7lsnzfcevqtfc8gnwkqu9mqqepxyqunv5hfk8lw3lqzjh24ufxvcg2",
		"LTCMWEB1QQ20E4WSQ", "tmweb1qq0example",
	} {
		if _, err := ParseAddress(payment.Litecoin, Mainnet, s); !errors.Is(err, ErrMWEB) {
			t.Errorf("ParseAddress(ltc, %s…) = %v, want ErrMWEB", s[:10], err)
		}
	}
}

// TestFixtureScripts checks every output of three real blocks (copied to
// testdata/ with their .source.txt): Core's displayed address must equal
// ScriptAddress of the script, and ParseAddress of the address must give the
// script back.
func TestFixtureScripts(t *testing.T) {
	type block struct {
		Tx []struct {
			Vout []struct {
				ScriptPubKey struct {
					Hex       string   `json:"hex"`
					Type      string   `json:"type"`
					Address   string   `json:"address"`
					Addresses []string `json:"addresses"`
				} `json:"scriptPubKey"`
			} `json:"vout"`
		} `json:"tx"`
	}
	files := map[string]payment.Network{
		"mainnet_getblock_v2_766390.json":  payment.Bitcoin,
		"mainnet_getblock_v2_2383207.json": payment.Litecoin,
		"mainnet_getblock_v2_2383209.json": payment.Litecoin,
	}
	types := map[payment.Network]map[string]int{payment.Bitcoin: {}, payment.Litecoin: {}}
	for name, n := range files {
		raw, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var b block
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		for _, tx := range b.Tx {
			for _, out := range tx.Vout {
				sp := out.ScriptPubKey
				script, err := hex.DecodeString(sp.Hex)
				if err != nil {
					t.Fatal(err)
				}
				want := sp.Address
				if len(sp.Addresses) == 1 {
					want = sp.Addresses[0]
				}
				if got := ScriptAddress(n, Mainnet, script); got != want {
					t.Errorf("%s: ScriptAddress(%s %s) = %q, Core shows %q", name, sp.Type, sp.Hex, got, want)
				}
				if want == "" {
					continue
				}
				types[n][sp.Type]++
				a, err := ParseAddress(n, Mainnet, want)
				if err != nil || !bytes.Equal(a.Key, script) || a.String != want {
					t.Errorf("%s: ParseAddress(%s) = %x, %v; want %s", name, want, a.Key, err, sp.Hex)
				}
			}
		}
	}
	for _, typ := range []string{"pubkeyhash", "scripthash", "witness_v0_keyhash", "witness_v0_scripthash", "witness_v1_taproot"} {
		if types[payment.Bitcoin][typ] == 0 {
			t.Errorf("bitcoin fixture has no %s output checked", typ)
		}
	}
	for _, typ := range []string{"pubkeyhash", "scripthash", "witness_v0_keyhash"} {
		if types[payment.Litecoin][typ] == 0 {
			t.Errorf("litecoin fixture has no %s output checked", typ)
		}
	}
}

func TestParseBitcoin(t *testing.T) {
	good := []struct{ chain, addr, script string }{
		// BIP173 test vectors.
		{Mainnet, "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"},
		{Testnet, "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262"},
		// BIP86 test vector m/86'/0'/0'/0/0 (abandon mnemonic).
		{Mainnet, "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr", "5120a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c"},
		// Genesis block coinbase key's P2PKH address.
		{Mainnet, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"},
	}
	for _, g := range good {
		a, err := ParseAddress(payment.Bitcoin, g.chain, g.addr)
		if err != nil || hex.EncodeToString(a.Key) != g.script || a.String != strings.ToLower(g.addr) && a.String != g.addr {
			t.Errorf("ParseAddress(%s) = %+v, %v; want %s", g.addr, a, err, g.script)
		}
	}

	h20, h32 := bytes.Repeat([]byte{7}, 20), bytes.Repeat([]byte{9}, 32)
	enc := func(hrp string, m bool, version byte, prog []byte) string {
		conv, err := bech32.ConvertBits(prog, 8, 5, true)
		if err != nil {
			t.Fatal(err)
		}
		f := bech32.Encode
		if m {
			f = bech32.EncodeM
		}
		s, err := f(hrp, append([]byte{version}, conv...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := enc("bc", false, 0, h20)
	bad := []string{
		"", "bc1", "hello", valid[:len(valid)-1] + "q", strings.ToUpper(valid[:10]) + valid[10:],
		enc("bc", true, 0, h20),              // v0 with bech32m checksum (BIP350)
		enc("bc", false, 1, h32),             // v1 with bech32 checksum (BIP350)
		enc("bc", false, 0, h20[:19]),        // v0 program of 19 bytes
		enc("bc", true, 1, h20),              // v1 program of 20 bytes
		enc("bc", true, 2, h32),              // future witness version
		enc("tb", false, 0, h20),             // testnet on mainnet
		enc("ltc", false, 0, h20),            // litecoin
		base58.CheckEncode(h20, 0x6f),        // testnet P2PKH
		base58.CheckEncode(h32, 0x00),        // 32-byte payload
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", // checksum
		"0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
	}
	for _, s := range bad {
		if a, err := ParseAddress(payment.Bitcoin, Mainnet, s); !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("ParseAddress(btc, %q) = %+v, %v; want ErrInvalidAddress", s, a, err)
		}
	}
	// Non-standard scripts render as "".
	for _, s := range []string{"", "6a0401020304", "0014" + "07", "5220" + hex.EncodeToString(h32), "a914" + hex.EncodeToString(h20) + "88"} {
		if got := ScriptAddress(payment.Bitcoin, Mainnet, mustHex(s)); got != "" {
			t.Errorf("ScriptAddress(%s) = %q, want empty", s, got)
		}
	}
	if got := ScriptAddress(payment.Ethereum, Mainnet, mustHex("0014"+hex.EncodeToString(h20))); got != "" {
		t.Errorf("ScriptAddress on ethereum = %q", got)
	}
	if _, err := ParseAddress(payment.Bitcoin, "signet", valid); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown chain: %v", err)
	}
	if _, err := ParseAddress("dogecoin", Mainnet, valid); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown network: %v", err)
	}
}

func TestParseEthereum(t *testing.T) {
	const usdt = "0xdAC17F958D2ee523a2206206994597C13D831ec7" // payment.Methods USDT contract, EIP-55
	for _, s := range []string{usdt, strings.ToLower(usdt), "0x" + strings.ToUpper(usdt[2:])} {
		a, err := ParseAddress(payment.Ethereum, Mainnet, s)
		if err != nil || a.String != usdt || hex.EncodeToString(a.Key) != strings.ToLower(usdt[2:]) {
			t.Errorf("ParseAddress(%s) = %+v, %v", s, a, err)
		}
	}
	for _, s := range []string{
		"0xDAC17F958D2ee523a2206206994597C13D831ec7", // one letter's case flipped: checksum error
		"dAC17F958D2ee523a2206206994597C13D831ec7", "0XdAC17F958D2ee523a2206206994597C13D831ec7",
		"0xdAC17F958D2ee523a2206206994597C13D831ec", "0xdAC17F958D2ee523a2206206994597C13D831ec7a",
		"0xgAC17F958D2ee523a2206206994597C13D831ec7", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "",
	} {
		if _, err := ParseAddress(payment.Ethereum, Mainnet, s); !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("ParseAddress(eth, %q): %v, want ErrInvalidAddress", s, err)
		}
	}
}

func TestParseSolana(t *testing.T) {
	const k = "3E95aAVYb5F8XKk8X7wH2nxiUnPXBCFwVt8GfC2uf9cd"
	a, err := ParseAddress(payment.Solana, Mainnet, k)
	if err != nil || a.String != k || len(a.Key) != 32 || base58.Encode(a.Key) != k {
		t.Errorf("ParseAddress(sol) = %+v, %v", a, err)
	}
	for _, s := range []string{"", "1" + k, k[:len(k)-1], k + "1", "0OIl" + k[4:], strings.Repeat("1", 31)} {
		if _, err := ParseAddress(payment.Solana, Mainnet, s); !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("ParseAddress(sol, %q): %v", s, err)
		}
	}
	if _, err := NewDeriver(payment.Solana, SandboxKeys[payment.Ethereum], Mainnet); !errors.Is(err, ErrNoDerivation) || !strings.Contains(err.Error(), "pool") {
		t.Errorf("NewDeriver(solana) = %v, want ErrNoDerivation", err)
	}
}

func TestSolanaPool(t *testing.T) {
	keys := SandboxSolanaPool
	valid := "# paywatch pool\n\n" + keys[0] + "\n  " + keys[1] + "  \r\n# more\n" + keys[2] + "\n"
	pool, err := ParseSolanaPool(strings.NewReader(valid))
	if err != nil || len(pool) != 3 {
		t.Fatalf("valid pool: %d, %v", len(pool), err)
	}
	for i, a := range pool {
		if a.String != keys[i] || a.Network != payment.Solana || a.Index != -1 || base58.Encode(a.Key) != keys[i] {
			t.Errorf("pool[%d] = %+v", i, a)
		}
	}

	pda, _, err := solana.FindProgramAddress([][]byte{[]byte("paywatch")}, solana.SystemProgramID)
	if err != nil || pda.IsOnCurve() {
		t.Fatalf("program address %s: %v", pda, err)
	}
	secret := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	cases := []struct {
		name, file, want string
	}{
		{"bad line", keys[0] + "\n\n" + "not-a-key\n" + keys[1], "line 3: not a 32-byte base58 public key"},
		{"short", keys[0] + "\n" + keys[1][:20], "line 2: not a 32-byte base58 public key"},
		{"duplicate", keys[0] + "\n" + keys[1] + "\n#\n" + keys[0], "line 4: duplicate of line 1"},
		{"off curve", keys[0] + "\n" + pda.String(), "line 2: " + pda.String() + " is off the ed25519 curve"},
		{"secret key", "# x\n" + base58.Encode(secret), "line 2: a 64-byte secret key"},
		{"keypair json", "[1,2,3]", "line 1: looks like a keypair"},
		{"empty", "# nothing\n\n", "no public key"},
		{"long line", keys[0] + "\n" + strings.Repeat("x", 5000), "line 2: longer than"},
	}
	for _, c := range cases {
		pool, err := ParseSolanaPool(strings.NewReader(c.file))
		if !errors.Is(err, ErrInvalidPool) || !strings.Contains(err.Error(), c.want) || pool != nil {
			t.Errorf("%s: %d keys, %v; want an error containing %q", c.name, len(pool), err, c.want)
		}
		if c.name == "secret key" && err != nil {
			noEcho(t, err.Error(), base58.Encode(secret))
		}
	}
}

// serialize builds a BIP32 serialization with a valid checksum.
func serialize(version []byte, depth byte, child uint32, chain, key []byte) string {
	p := make([]byte, 0, 82)
	p = append(p, version...)
	p = append(p, depth, 0, 0, 0, 0)
	p = binary.BigEndian.AppendUint32(p, child)
	p = append(p, chain...)
	p = append(p, key...)
	sum := sha256.Sum256(p)
	sum = sha256.Sum256(sum[:])
	return base58.Encode(append(p, sum[:4]...))
}

func TestRejectPrivateKeys(t *testing.T) {
	acct := privateAt(t, bip39Seed(t, abandonMnemonic, ""), h(84), h(0), h(0))
	versions := map[string]string{ // SLIP-132 / Litecoin private versions
		"xprv": "0488ade4", "tprv": "04358394", "yprv": "049d7878", "zprv": "04b2430c",
		"uprv": "044a4e28", "vprv": "045f18bc", "Ltpv": "019d9cfe", "Mtpv": "01b26792", "ttpv": "0436ef7d",
	}
	var keys []string
	for prefix, v := range versions {
		k, err := acct.CloneWithVersion(mustHex(v))
		if err != nil {
			t.Fatal(err)
		}
		s := k.String()
		if !strings.HasPrefix(s, prefix) {
			t.Fatalf("version %s serializes as %s…, not %s…", v, s[:4], prefix)
		}
		keys = append(keys, s)
	}
	// A private key disguised with public version bytes, and mangled ones.
	disguised, err := acct.CloneWithVersion(verZpub)
	if err != nil {
		t.Fatal(err)
	}
	xprv := keys[0]
	keys = append(keys, disguised.String(), xprv[:len(xprv)-1]+"x", xprv[:50], "  "+xprv+"\n")
	for _, k := range keys {
		for name, f := range map[string]func() error{
			"NewDeriver":  func() error { _, err := NewDeriver(payment.Bitcoin, k, Mainnet); return err },
			"Fingerprint": func() error { _, err := Fingerprint(k); return err },
		} {
			err := f()
			if !errors.Is(err, ErrPrivateKey) || !strings.Contains(err.Error(), "watch-only") {
				t.Errorf("%s(%s…): %v; want ErrPrivateKey", name, k[:6], err)
				continue
			}
			noEcho(t, err.Error(), strings.TrimSpace(k))
		}
	}
	for _, v := range []struct {
		prefix string
		v      []byte
	}{{"xpub", verXpub}, {"tpub", verTpub}, {"zpub", verZpub}, {"vpub", verVpub}, {"Ltub", verLtub}} {
		if s := publicAt(t, abandonMnemonic, v.v, h(84), h(0), h(0)); !strings.HasPrefix(s, v.prefix) {
			t.Errorf("version %x serializes as %s…", v.v, s[:4])
		}
	}
}

func TestRejectInvalidKeys(t *testing.T) {
	seed := bip39Seed(t, abandonMnemonic, "")
	pubAt := func(path ...uint32) string {
		k, err := privateAt(t, seed).Neuter()
		if err != nil {
			t.Fatal(err)
		}
		priv := privateAt(t, seed, path...)
		if k, err = priv.Neuter(); err != nil {
			t.Fatal(err)
		}
		return k.String()
	}
	master := pubAt()
	depth4 := pubAt(h(84), h(0), h(0), 0)
	m, err := privateAt(t, seed).Neuter()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{0, 0, 0} {
		if m, err = m.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	unhardened := m.String()
	chain := bytes.Repeat([]byte{1}, 32)
	offCurve := append([]byte{0x02}, mustHex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")...)
	flipped := []byte(bip84AccountZpub)
	flipped[40] = 'A'
	cases := []struct{ name, key, want string }{
		{"empty", "", "not base58"},
		{"garbage", "hello world", "not base58"},
		{"hex", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "not base58"},
		{"short", bip84AccountZpub[:60], "bytes"},
		{"checksum", string(flipped), "checksum"},
		{"address", bip84Receive0, "not base58"},
		{"master", master, "depth 0"},
		{"depth 4", depth4, "depth 4"},
		{"non-hardened", unhardened, "non-hardened"},
		{"off curve", serialize(verXpub, 3, h(0), chain, offCurve), "not a secp256k1 point"},
		{"bad prefix", serialize(verXpub, 3, h(0), chain, append([]byte{0x04}, offCurve[1:]...)), "not a compressed public key"},
	}
	for _, c := range cases {
		for name, f := range map[string]func() error{
			"NewDeriver":  func() error { _, err := NewDeriver(payment.Ethereum, c.key, Mainnet); return err },
			"Fingerprint": func() error { _, err := Fingerprint(c.key); return err },
		} {
			err := f()
			if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %s: %v; want ErrInvalidKey containing %q", name, c.name, err, c.want)
				continue
			}
			noEcho(t, err.Error(), c.key)
		}
	}
	if _, err := NewDeriver(payment.Bitcoin, bip84AccountZpub, "signet"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown chain: %v", err)
	}
	if _, err := NewDeriver("dogecoin", bip84AccountZpub, Mainnet); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown network: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	z, err := Fingerprint(bip84AccountZpub)
	if err != nil {
		t.Fatal(err)
	}
	x, err := Fingerprint(" " + publicAt(t, abandonMnemonic, verXpub, h(84), h(0), h(0)) + "\n")
	if err != nil {
		t.Fatal(err)
	}
	other, err := Fingerprint(publicAt(t, abandonMnemonic, verZpub, h(84), h(0), h(1)))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := parseAccountKey(bip84AccountZpub)
	sum := sha256.Sum256(append(k.pub[:], k.chain[:]...))
	if z != hex.EncodeToString(sum[:8]) || len(z) != 16 || z != x || z == other {
		t.Errorf("fingerprints zpub %s, xpub %s, account 1 %s", z, x, other)
	}
}

func TestDeriveBounds(t *testing.T) {
	d := newDeriver(t, payment.Ethereum, SandboxKeys[payment.Ethereum], Mainnet)
	if a := derive(t, d, MaxIndex); a.Index != int64(MaxIndex) {
		t.Errorf("MaxIndex: %+v", a)
	}
	if _, err := d.Derive(MaxIndex + 1); !errors.Is(err, ErrIndexOutOfRange) {
		t.Errorf("MaxIndex+1: %v", err)
	}
	// Concurrent derivation gives the same, distinct addresses as sequential.
	const n = 64
	want := make([]string, n)
	for i := range want {
		want[i] = derive(t, d, uint32(i)).String
	}
	seen := map[string]bool{}
	for _, s := range want {
		if seen[s] {
			t.Fatalf("address %s derived twice", s)
		}
		seen[s] = true
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, err := d.Derive(uint32(i))
			if err == nil && a.String != want[i] {
				err = fmt.Errorf("index %d: %s != %s", i, a.String, want[i])
			}
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func benchmarkDerive(b *testing.B, n payment.Network, key string) {
	d := newDeriver(b, n, key, Mainnet)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := d.Derive(uint32(i) & MaxIndex); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeriveBitcoin(b *testing.B) { benchmarkDerive(b, payment.Bitcoin, bip84AccountZpub) }
func BenchmarkDeriveEthereum(b *testing.B) {
	benchmarkDerive(b, payment.Ethereum, SandboxKeys[payment.Ethereum])
}

// TestDeriveMatchesHDKeychain compares the deriver's own CKDpub with
// btcutil/hdkeychain's public derivation over many indexes and keys.
func TestDeriveMatchesHDKeychain(t *testing.T) {
	indexes := []uint32{MaxIndex, MaxIndex - 1, 1 << 30, 123456789}
	for i := uint32(0); i < 150; i++ {
		indexes = append(indexes, i)
	}
	for _, key := range []string{bip84AccountZpub, SandboxKeys[payment.Ethereum], SandboxKeys[payment.Tron], SandboxKeys[payment.Litecoin]} {
		k, err := parseAccountKey(key)
		if err != nil {
			t.Fatal(err)
		}
		external, err := k.hd().Derive(0)
		if err != nil {
			t.Fatal(err)
		}
		d := newDeriver(t, payment.Ethereum, key, Mainnet)
		for _, i := range indexes {
			child, err := external.Derive(i)
			if err != nil {
				t.Fatal(err)
			}
			pub, err := child.ECPubKey()
			if err != nil {
				t.Fatal(err)
			}
			if a := derive(t, d, i); !bytes.Equal(a.Key, ethAccount(pub)) {
				t.Fatalf("index %d: %x, hdkeychain gives %x", i, a.Key, ethAccount(pub))
			}
		}
	}
}

// DeriveRange gives, index for index, what Derive gives, on every network
// that derives, for ranges of one, several and many indexes, up to
// MaxIndex and not beyond.
func TestDeriveRangeMatchesDerive(t *testing.T) {
	for _, c := range []struct {
		n   payment.Network
		key string
	}{
		{payment.Bitcoin, bip84AccountZpub}, {payment.Litecoin, SandboxKeys[payment.Litecoin]},
		{payment.Ethereum, SandboxKeys[payment.Ethereum]}, {payment.Tron, SandboxKeys[payment.Tron]},
	} {
		d := newDeriver(t, c.n, c.key, Mainnet)
		for _, r := range []struct {
			first uint32
			n     int
		}{{0, 1}, {0, 2}, {7, 3}, {100, 150}, {MaxIndex - 4, 5}} {
			got, err := DeriveRange(d, r.first, r.n)
			if err != nil {
				t.Fatalf("%s DeriveRange(%d, %d): %v", c.n, r.first, r.n, err)
			}
			if len(got) != r.n {
				t.Fatalf("%s DeriveRange(%d, %d): %d addresses", c.n, r.first, r.n, len(got))
			}
			for i, a := range got {
				want := derive(t, d, r.first+uint32(i))
				if a.String != want.String || !bytes.Equal(a.Key, want.Key) || a.Index != want.Index || a.Network != want.Network {
					t.Fatalf("%s index %d: DeriveRange gives %+v, Derive %+v", c.n, r.first+uint32(i), a, want)
				}
			}
		}
		if _, err := DeriveRange(d, MaxIndex-1, 3); !errors.Is(err, ErrIndexOutOfRange) {
			t.Errorf("%s DeriveRange past MaxIndex: %v", c.n, err)
		}
		if got, err := DeriveRange(d, 5, 0); err != nil || len(got) != 0 {
			t.Errorf("%s DeriveRange of none: %v, %v", c.n, got, err)
		}
	}
}

// BenchmarkDeriveRangeBitcoin derives as the replenisher does, 64 indexes
// at a time; its ns/op is per address, to set beside BenchmarkDeriveBitcoin.
func BenchmarkDeriveRangeBitcoin(b *testing.B) {
	d := newDeriver(b, payment.Bitcoin, bip84AccountZpub, Mainnet)
	b.ReportAllocs()
	for i := 0; b.Loop(); i += 64 {
		if _, err := DeriveRange(d, uint32(i)&(MaxIndex>>1), 64); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/address")
}

// TestNewDeriverRemembersWhatItMade: the same arguments answer the deriver
// made before, other arguments (network, chain or key) their own; a key
// refused is refused again, not remembered.
func TestNewDeriverRemembersWhatItMade(t *testing.T) {
	a := newDeriver(t, payment.Bitcoin, bip84AccountZpub, Mainnet)
	if b := newDeriver(t, payment.Bitcoin, bip84AccountZpub, Mainnet); a != b {
		t.Errorf("the same arguments made a second deriver")
	}
	test := newDeriver(t, payment.Bitcoin, bip84AccountZpub, Testnet)
	if test == a {
		t.Errorf("another chain answered the mainnet deriver")
	}
	if x, y := derive(t, a, 0).String, derive(t, test, 0).String; x == y || x != bip84Receive0 {
		t.Errorf("mainnet %s (want %s), testnet %s", x, bip84Receive0, y)
	}
	if ltc := newDeriver(t, payment.Litecoin, bip84AccountZpub, Mainnet); ltc == a {
		t.Errorf("another network answered the bitcoin deriver")
	}
	bad := bip84AccountZpub[:len(bip84AccountZpub)-1] + "x"
	for range 2 {
		if _, err := NewDeriver(payment.Bitcoin, bad, Mainnet); err == nil {
			t.Fatalf("a key with a bad checksum was accepted")
		}
	}
}
