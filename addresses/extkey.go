package addresses

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
)

// accountDepth is the BIP32 depth of an account key (m/purpose'/coin'/account').
const accountDepth = 3

// serializedLen is the length of a BIP32 serialization plus its checksum.
const serializedLen = 78 + 4

// privatePrefixes are the string prefixes of the private extended key
// versions in use (BIP32, SLIP-132, Litecoin). They are checked before
// decoding so that even a mangled private key gets the right error.
var privatePrefixes = []string{
	"xprv", "tprv", "yprv", "zprv", "uprv", "vprv",
	"Yprv", "Zprv", "Uprv", "Vprv", "Ltpv", "Mtpv", "ttpv",
}

// privateVersions are the version bytes of the private prefixes above.
var privateVersions = map[uint32]string{
	0x0488ade4: "xprv", 0x04358394: "tprv",
	0x049d7878: "yprv", 0x04b2430c: "zprv",
	0x044a4e28: "uprv", 0x045f18bc: "vprv",
	0x019d9cfe: "Ltpv", 0x01b26792: "Mtpv", 0x0436ef7d: "ttpv",
}

// extPub is a decoded extended public key.
type extPub struct {
	version  [4]byte
	depth    uint8
	parentFP [4]byte
	child    uint32
	chain    [32]byte
	pub      [33]byte
}

// parseExtPub decodes a BIP32 serialized extended public key, whatever its
// version bytes. Errors never contain s.
func parseExtPub(s string) (extPub, error) {
	s = strings.TrimSpace(s)
	for _, p := range privatePrefixes {
		if strings.HasPrefix(s, p) {
			return extPub{}, fmt.Errorf("%w (%s… key refused)", ErrPrivateKey, p)
		}
	}
	raw := base58.Decode(s)
	if len(raw) == 0 {
		return extPub{}, fmt.Errorf("%w: not base58 (want an extended public key such as xpub…/zpub…)", ErrInvalidKey)
	}
	if len(raw) != serializedLen {
		return extPub{}, fmt.Errorf("%w: decodes to %d bytes, an extended key has %d", ErrInvalidKey, len(raw), serializedLen)
	}
	payload, sum := raw[:78], raw[78:]
	h := sha256.Sum256(payload)
	h = sha256.Sum256(h[:])
	if !bytes.Equal(h[:4], sum) {
		return extPub{}, fmt.Errorf("%w: base58check checksum mismatch (mistyped or truncated key)", ErrInvalidKey)
	}
	var k extPub
	copy(k.version[:], payload[0:4])
	k.depth = payload[4]
	copy(k.parentFP[:], payload[5:9])
	k.child = binary.BigEndian.Uint32(payload[9:13])
	copy(k.chain[:], payload[13:45])
	keyData := payload[45:78]
	if name, ok := privateVersions[binary.BigEndian.Uint32(k.version[:])]; ok {
		return extPub{}, fmt.Errorf("%w (%s version bytes)", ErrPrivateKey, name)
	}
	if keyData[0] == 0x00 {
		return extPub{}, fmt.Errorf("%w (key data is a private key)", ErrPrivateKey)
	}
	if keyData[0] != 0x02 && keyData[0] != 0x03 {
		return extPub{}, fmt.Errorf("%w: key data is not a compressed public key", ErrInvalidKey)
	}
	if _, err := btcec.ParsePubKey(keyData); err != nil {
		return extPub{}, fmt.Errorf("%w: public key is not a secp256k1 point", ErrInvalidKey)
	}
	copy(k.pub[:], keyData)
	return k, nil
}

// parseAccountKey is parseExtPub restricted to account-level keys.
func parseAccountKey(s string) (extPub, error) {
	k, err := parseExtPub(s)
	if err != nil {
		return extPub{}, err
	}
	if k.depth != accountDepth {
		return extPub{}, fmt.Errorf("%w: key has depth %d; want an account-level key (depth 3, e.g. m/84'/0'/0' or m/44'/60'/0')", ErrInvalidKey, k.depth)
	}
	if k.child < hdkeychain.HardenedKeyStart {
		return extPub{}, fmt.Errorf("%w: key is a non-hardened child; want an account-level key (m/purpose'/coin'/account')", ErrInvalidKey)
	}
	return k, nil
}

// hd returns k as an hdkeychain public key.
func (k extPub) hd() *hdkeychain.ExtendedKey {
	return hdkeychain.NewExtendedKey(k.version[:], k.pub[:], k.chain[:], k.parentFP[:], k.depth, k.child, false)
}

// Fingerprint returns a short stable identifier of an account key: the hex of
// the first 8 bytes of sha256(compressed public key ‖ chain code). It does
// not depend on the key's version bytes (an xpub and a zpub of one account
// have the same fingerprint), so the store can keep one index counter per
// account. Private keys and invalid keys are rejected as by NewDeriver.
func Fingerprint(accountKey string) (string, error) {
	k, err := parseAccountKey(accountKey)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(k.pub[:])
	h.Write(k.chain[:])
	return fmt.Sprintf("%x", h.Sum(nil)[:8]), nil
}
