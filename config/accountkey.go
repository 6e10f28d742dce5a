package config

import (
	"fmt"
	"strings"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
)

// CheckAccountKey checks an extended key for network on chain as Validate
// checks networks.<n>.account_key: not a private key, not another coin's
// or network's key, and on mainnet not a well-known test key. The error
// names field. (The key's shape, depth and derivation are checked by
// addresses.NewDeriver, as the daemon does.) The API's stores routes check
// a store's key with it.
func CheckAccountKey(network payment.Network, chain, field, key string) error {
	if looksPrivate(key) {
		return fmt.Errorf("%s is a PRIVATE extended key; paywatch is watch-only and needs the public key (xpub)", field)
	}
	if chain == "mainnet" {
		if what, ok := addresses.WellKnownTestKey(key); ok {
			return fmt.Errorf("%s %s is the well-known test key %s: its private keys are public, so anyone can take what is paid to its addresses",
				field, abbreviate(key), what)
		}
	}
	if err := checkKeyVersion(network, chain, key); err != nil {
		_, msg, _ := strings.Cut(err.Error(), "networks."+string(network)+".account_key: ")
		return fmt.Errorf("%s: %s", field, msg)
	}
	return nil
}
