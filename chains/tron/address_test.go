package tron_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"

	"github.com/paywatch/paywatch/chains/tron"
)

// Real mainnet pairs (CHAINS.md §7, fixtures): base58check and 41-hex.
var addressVectors = []struct{ base58, hex41 string }{
	{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"}, // USDT contract
	{"TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt", "410d0707963952f2fba59dd06f2b425ace40b492fe"}, // USDT recipient, tx 0af79242
	{"TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7", "41e4b8075df69297bc24cc4bbaf48cd17206e1f62c"}, // USDT sender, tx 0af79242
	{"TJ4eV1hnVAiFmeArBsuL6GkgTGVnWBe7eV", "4158c85b7b6a5118beb3b23c14fcb2f3551a81d79a"}, // 50 TRX recipient, tx 979e0823
	{"TTmaAAbFPtACn1amP3FBkmmUygFh8udAvA", "41c33eeefda1059afba41d86759e281bcb851edfc8"}, // 50 TRX sender
}

func TestAddressRoundTrip(t *testing.T) {
	for _, v := range addressVectors {
		fromB58, err := tron.ParseAddress(v.base58)
		if err != nil {
			t.Fatalf("ParseAddress(%s): %v", v.base58, err)
		}
		fromHex, err := tron.ParseAddress(v.hex41)
		if err != nil {
			t.Fatalf("ParseAddress(%s): %v", v.hex41, err)
		}
		if len(fromB58) != 20 || hex.EncodeToString(fromB58) != v.hex41[2:] || string(fromHex) != string(fromB58) {
			t.Fatalf("%s -> %x, %s -> %x", v.base58, fromB58, v.hex41, fromHex)
		}
		if got := tron.Address(fromHex); got != v.base58 {
			t.Fatalf("Address(%s) = %s, want %s", v.hex41, got, v.base58)
		}
	}
}

func TestParseAddressRejects(t *testing.T) {
	good := addressVectors[1].base58
	// Change one character: the checksum no longer matches.
	bad := good[:len(good)-1] + "u"
	account, _ := hex.DecodeString(addressVectors[1].hex41[2:])
	for _, s := range []string{
		bad,
		good[:len(good)-2],
		base58.CheckEncode(account, 0x00),           // Bitcoin version byte
		base58.CheckEncode(account[:19], 0x41),      // 19 bytes
		"42" + addressVectors[1].hex41[2:],          // wrong hex prefix
		addressVectors[1].hex41[:40],                // short hex
		"41" + addressVectors[1].hex41[2:40] + "zz", // not hex
		"0x" + addressVectors[1].hex41[2:],          // Ethereum form
		"",
	} {
		if b, err := tron.ParseAddress(s); !errors.Is(err, tron.ErrBadAddress) {
			t.Errorf("ParseAddress(%q) = %x, %v; want ErrBadAddress", s, b, err)
		}
	}
	if _, err := tron.ParseAddress(bad); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("ParseAddress(%q) = %v, want a checksum error", bad, err)
	}
}
