package tron

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// AddressPrefix is the version byte of every Tron mainnet account address:
// the 21-byte wire form is AddressPrefix followed by the 20-byte account.
const AddressPrefix byte = 0x41

// ErrBadAddress is returned by ParseAddress for a string that is neither a
// base58check T… address nor a 41-prefixed hex address, or whose checksum,
// version byte or length is wrong.
var ErrBadAddress = errors.New("tron: bad address")

// Address returns the base58check form (T…) of a 20-byte account. It is the
// form explorers and wallets show and the one paywatch hands out.
func Address(account20 []byte) string {
	return base58.CheckEncode(account20, AddressPrefix)
}

// ParseAddress returns the 20-byte account of s, which is either a
// base58check address (T…) or the node's hex form (41 followed by 40 hex
// digits). A wrong checksum, version byte or length is ErrBadAddress.
func ParseAddress(s string) ([]byte, error) {
	if len(s) == 42 && strings.HasPrefix(s, "41") {
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadAddress, s, err)
		}
		return b[1:], nil
	}
	if !strings.HasPrefix(s, "T") {
		return nil, fmt.Errorf("%w: %q: want T… base58check or 41… hex", ErrBadAddress, s)
	}
	payload, version, err := base58.CheckDecode(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadAddress, s, err)
	}
	if version != AddressPrefix || len(payload) != 20 {
		return nil, fmt.Errorf("%w: %q: version 0x%02x, %d bytes; want 0x41 and 20", ErrBadAddress, s, version, len(payload))
	}
	return payload, nil
}

// decodeAccount decodes the node's 41-prefixed 21-byte hex address into dst.
func decodeAccount(dst *[20]byte, s string) bool {
	if len(s) != 42 || s[0] != '4' || s[1] != '1' {
		return false
	}
	return decodeHex(dst[:], s[2:])
}

// decodeHex decodes the hex string s into dst, which must be exactly
// len(s)/2 bytes long. It does not allocate.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
