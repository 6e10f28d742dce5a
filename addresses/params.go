package addresses

import (
	"fmt"

	"github.com/paywatch/paywatch/payment"
)

// The chain names accepted by NewDeriver, ParseAddress and ScriptAddress.
const (
	Mainnet = "mainnet"
	Testnet = "testnet"
	Regtest = "regtest"
)

// utxoParams are the address encodings of one UTXO chain (BTC or LTC on
// mainnet, testnet or regtest).
type utxoParams struct {
	hrp string
	// p2pkh is the base58 version byte of pay-to-pubkey-hash addresses.
	p2pkh byte
	// p2sh is the base58 version byte displayed for pay-to-script-hash.
	p2sh byte
	// p2shLegacy is a second accepted P2SH version (Litecoin's old 3…/2…
	// form, CHAINS.md §3); zero when there is none.
	p2shLegacy byte
}

var utxoChains = map[payment.Network]map[string]utxoParams{
	// Bitcoin Core src/kernel/chainparams.cpp.
	payment.Bitcoin: {
		Mainnet: {hrp: "bc", p2pkh: 0x00, p2sh: 0x05},
		Testnet: {hrp: "tb", p2pkh: 0x6f, p2sh: 0xc4},
		Regtest: {hrp: "bcrt", p2pkh: 0x6f, p2sh: 0xc4},
	},
	// Litecoin Core src/chainparams.cpp: PUBKEY_ADDRESS, SCRIPT_ADDRESS2
	// (displayed), SCRIPT_ADDRESS (legacy, still accepted).
	payment.Litecoin: {
		Mainnet: {hrp: "ltc", p2pkh: 0x30, p2sh: 0x32, p2shLegacy: 0x05},
		Testnet: {hrp: "tltc", p2pkh: 0x6f, p2sh: 0x3a, p2shLegacy: 0xc4},
		Regtest: {hrp: "rltc", p2pkh: 0x6f, p2sh: 0x3a, p2shLegacy: 0xc4},
	},
}

// checkChain validates the network and chain names and returns the UTXO
// parameters (zero for account networks).
func checkChain(network payment.Network, chain string) (utxoParams, error) {
	if !network.Valid() {
		return utxoParams{}, fmt.Errorf("%w: network %q", ErrUnsupported, network)
	}
	switch chain {
	case Mainnet, Testnet, Regtest:
	default:
		return utxoParams{}, fmt.Errorf("%w: chain %q (want mainnet, testnet or regtest)", ErrUnsupported, chain)
	}
	return utxoChains[network][chain], nil
}

func isUTXO(network payment.Network) bool {
	return network == payment.Bitcoin || network == payment.Litecoin
}
