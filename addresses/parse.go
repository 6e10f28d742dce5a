package addresses

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/payment"
)

// Output script opcodes of the standard templates.
const (
	opDup         = 0x76
	opHash160     = 0xa9
	opEqual       = 0x87
	opEqualVerify = 0x88
	opCheckSig    = 0xac
	op0           = 0x00
	op1           = 0x51
)

// ParseAddress parses the display address s of network on chain into its
// binary watch key. BTC/LTC accept bech32 P2WPKH/P2WSH and bech32m P2TR (any
// case, not mixed) and base58 P2PKH/P2SH (LTC also the legacy 3…/2… P2SH
// form, which gives the same script as its M…/Q… form) and return the output
// script; LTC MWEB addresses are ErrMWEB. ETH accepts 0x + 40 hex digits
// (EIP-55 checksum verified when mixed case). Tron accepts T… base58check and
// 41… hex. Solana accepts base58 of 32 bytes. The result's String is the
// canonical form and its Index is -1.
func ParseAddress(network payment.Network, chain string, s string) (Address, error) {
	params, err := checkChain(network, chain)
	if err != nil {
		return Address{}, err
	}
	a := Address{Network: network, Index: -1}
	switch network {
	case payment.Bitcoin, payment.Litecoin:
		a.Key, err = parseUTXO(network, params, s)
		if err == nil {
			a.String = ScriptAddress(network, chain, a.Key)
		}
	case payment.Ethereum:
		a.Key, a.String, err = parseEthereum(s)
	case payment.Tron:
		a.Key, err = TronAccount(s)
		a.String = TronAddress(a.Key)
	case payment.Solana:
		a.Key, err = parseSolanaKey(s)
		a.String = base58.Encode(a.Key)
	}
	if err != nil {
		return Address{}, err
	}
	return a, nil
}

// parseUTXO returns the output script of a BTC/LTC address.
func parseUTXO(network payment.Network, p utxoParams, s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty %s address", ErrInvalidAddress, network)
	}
	lower := strings.ToLower(s)
	if network == payment.Litecoin && (strings.HasPrefix(lower, "ltcmweb1") || strings.HasPrefix(lower, "tmweb1")) {
		return nil, ErrMWEB
	}
	if strings.HasPrefix(lower, p.hrp+"1") {
		return parseSegwit(network, p.hrp, s)
	}
	payload, version, err := base58.CheckDecode(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q is neither %s1… bech32 nor base58check: %v", ErrInvalidAddress, network, s, p.hrp, err)
	}
	if len(payload) != 20 {
		return nil, fmt.Errorf("%w: %s %q has a %d-byte payload, want 20", ErrInvalidAddress, network, s, len(payload))
	}
	switch {
	case version == p.p2pkh:
		return p2pkhScript(payload), nil
	case version == p.p2sh || (p.p2shLegacy != 0 && version == p.p2shLegacy):
		return p2shScript(payload), nil
	}
	return nil, fmt.Errorf("%w: %s %q has version byte 0x%02x, not an address of this chain", ErrInvalidAddress, network, s, version)
}

// parseSegwit decodes a bech32/bech32m segwit address into its output
// script, accepting P2WPKH, P2WSH and P2TR only.
func parseSegwit(network payment.Network, hrp, s string) ([]byte, error) {
	gotHRP, data, variant, err := bech32.DecodeGeneric(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", ErrInvalidAddress, network, s, err)
	}
	if gotHRP != hrp || len(data) == 0 {
		return nil, fmt.Errorf("%w: %s %q is not a %s1… address", ErrInvalidAddress, network, s, hrp)
	}
	version := data[0]
	program, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", ErrInvalidAddress, network, s, err)
	}
	switch {
	case version == 0 && variant != bech32.Version0,
		version != 0 && variant != bech32.VersionM:
		return nil, fmt.Errorf("%w: %s %q uses the wrong bech32 variant for witness version %d (BIP350)", ErrInvalidAddress, network, s, version)
	case version == 0 && (len(program) == 20 || len(program) == 32),
		version == 1 && len(program) == 32:
		script := make([]byte, 0, 2+len(program))
		if version == 0 {
			script = append(script, op0)
		} else {
			script = append(script, op1)
		}
		script = append(script, byte(len(program)))
		return append(script, program...), nil
	}
	return nil, fmt.Errorf("%w: %s %q is witness version %d with a %d-byte program; only P2WPKH, P2WSH and P2TR are accepted", ErrInvalidAddress, network, s, version, len(program))
}

// encodeSegwit renders a witness program: bech32 for version 0, bech32m
// above (BIP350).
func encodeSegwit(hrp string, version byte, program []byte) (string, error) {
	conv, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		return "", err
	}
	data := append([]byte{version}, conv...)
	if version == 0 {
		return bech32.Encode(hrp, data)
	}
	return bech32.EncodeM(hrp, data)
}

func p2pkhScript(h []byte) []byte {
	s := make([]byte, 0, 25)
	s = append(s, opDup, opHash160, 20)
	s = append(s, h...)
	return append(s, opEqualVerify, opCheckSig)
}

func p2shScript(h []byte) []byte {
	s := make([]byte, 0, 23)
	s = append(s, opHash160, 20)
	s = append(s, h...)
	return append(s, opEqual)
}

// ScriptAddress renders a BTC/LTC output script as an address of chain when
// it is a standard one (P2PKH, P2SH, P2WPKH, P2WSH, P2TR), else "". Litecoin
// P2SH renders in the current M…/Q… form. It returns "" for other networks
// and unknown chains.
func ScriptAddress(network payment.Network, chain string, script []byte) string {
	if !isUTXO(network) {
		return ""
	}
	p, err := checkChain(network, chain)
	if err != nil {
		return ""
	}
	n := len(script)
	switch {
	case n == 25 && script[0] == opDup && script[1] == opHash160 && script[2] == 20 &&
		script[23] == opEqualVerify && script[24] == opCheckSig:
		return base58.CheckEncode(script[3:23], p.p2pkh)
	case n == 23 && script[0] == opHash160 && script[1] == 20 && script[22] == opEqual:
		return base58.CheckEncode(script[2:22], p.p2sh)
	case n == 22 && script[0] == op0 && script[1] == 20,
		n == 34 && script[0] == op0 && script[1] == 32,
		n == 34 && script[0] == op1 && script[1] == 32:
		version := byte(0)
		if script[0] == op1 {
			version = 1
		}
		s, err := encodeSegwit(p.hrp, version, script[2:])
		if err != nil {
			return ""
		}
		return s
	}
	return ""
}

// parseEthereum parses 0x + 40 hex digits, verifying the EIP-55 checksum
// when the digits are mixed case.
func parseEthereum(s string) ([]byte, string, error) {
	if len(s) != 42 || !strings.HasPrefix(s, "0x") {
		return nil, "", fmt.Errorf("%w: ethereum %q is not 0x followed by 40 hex digits", ErrInvalidAddress, s)
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return nil, "", fmt.Errorf("%w: ethereum %q is not 0x followed by 40 hex digits", ErrInvalidAddress, s)
	}
	canonical := common.BytesToAddress(b).Hex()
	digits := s[2:]
	if digits != strings.ToLower(digits) && digits != strings.ToUpper(digits) && s != canonical {
		return nil, "", fmt.Errorf("%w: ethereum %q has a wrong EIP-55 checksum (mistyped?)", ErrInvalidAddress, s)
	}
	return b, canonical, nil
}

// parseSolanaKey decodes a canonical base58 32-byte public key.
func parseSolanaKey(s string) ([]byte, error) {
	b := base58.Decode(s)
	if len(b) != 32 || base58.Encode(b) != s {
		return nil, fmt.Errorf("%w: solana %q is not a 32-byte base58 public key", ErrInvalidAddress, s)
	}
	return b, nil
}
