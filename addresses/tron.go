package addresses

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// tronPrefix is the version byte of Tron mainnet (and testnet) addresses.
const tronPrefix = 0x41

// TronAddress renders a 20-byte Tron account as base58check(0x41 ‖ a), the
// T… form. It returns "" when a is not 20 bytes.
func TronAddress(account20 []byte) string {
	if len(account20) != 20 {
		return ""
	}
	return base58.CheckEncode(account20, tronPrefix)
}

// TronAccount parses a Tron address, T… base58check or 41-prefixed hex (42
// hex digits), into its 20-byte account. Checksum errors, other version
// bytes and other lengths are rejected with ErrInvalidAddress.
func TronAccount(s string) ([]byte, error) {
	if len(s) == 42 && (strings.HasPrefix(s, "41")) {
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: tron %q is not hex", ErrInvalidAddress, s)
		}
		return b[1:], nil
	}
	if !strings.HasPrefix(s, "T") {
		return nil, fmt.Errorf("%w: tron %q is neither T… base58check nor 41… hex", ErrInvalidAddress, s)
	}
	b, version, err := base58.CheckDecode(s)
	if err != nil {
		return nil, fmt.Errorf("%w: tron %q: %v", ErrInvalidAddress, s, err)
	}
	if version != tronPrefix || len(b) != 20 {
		return nil, fmt.Errorf("%w: tron %q does not decode to 0x41 + 20 bytes", ErrInvalidAddress, s)
	}
	return b, nil
}
