package finance

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/payment"
)

// refundTxID trims a refund transaction id and checks it has the shape of a
// transaction id of network: 64 hex digits for Bitcoin, Litecoin and Tron,
// 0x and 64 hex digits for Ethereum, a base58 64-byte signature for Solana.
// Hex ids are returned in lower case. Anything else (a formula, a URL, an
// id of another network) is refused, so the reconciliation carries only
// ids a block explorer can look up.
func refundTxID(network, s string) (string, error) {
	s = strings.TrimSpace(s)
	switch payment.Network(network) {
	case payment.Bitcoin, payment.Litecoin, payment.Tron:
		if len(s) == 64 && isHex(s) {
			return strings.ToLower(s), nil
		}
		return "", fmt.Errorf("a %s transaction id is 64 hex digits", network)
	case payment.Ethereum:
		if len(s) == 66 && (s[:2] == "0x" || s[:2] == "0X") && isHex(s[2:]) {
			return "0x" + strings.ToLower(s[2:]), nil
		}
		return "", fmt.Errorf("an ethereum transaction hash is 0x and 64 hex digits")
	case payment.Solana:
		if b, err := base58.Decode(s); err == nil && len(b) == 64 && len(s) <= 88 {
			return s, nil
		}
		return "", fmt.Errorf("a solana transaction signature is 64 bytes in base58")
	}
	return "", fmt.Errorf("no transaction id shape is known for network %q", network)
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
