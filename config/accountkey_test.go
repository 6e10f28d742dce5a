package config

import (
	"strings"
	"testing"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
)

// CheckAccountKey refuses what Validate refuses in networks.<n>.account_key
// (a private key, another coin's or network's key, a well-known test key on
// mainnet), naming the field it is given; the API's stores routes use it.
func TestCheckAccountKey(t *testing.T) {
	for _, c := range []struct {
		name       string
		network    payment.Network
		chain, key string
		says       string
	}{
		{"private", payment.Bitcoin, "regtest", "tprv8ZgxMBicQKsPd9TeAdPADNnSyH9SSUUbTVeFszDE23Ki6TBB5nCefAdHkK8Fm3qMQR6sHwA56zqRmKmxnHk37JkiFzvncDqoKmPWubu7hDF", "PRIVATE"},
		{"litecoin key for bitcoin", payment.Bitcoin, "regtest", addresses.SandboxKeys[payment.Litecoin], "a Litecoin key"},
		{"test key on mainnet", payment.Bitcoin, "mainnet", addresses.SandboxBitcoinMainnetKey, "well-known test key"},
	} {
		err := CheckAccountKey(c.network, c.chain, "account_key", c.key)
		if err == nil || !strings.HasPrefix(err.Error(), "account_key") || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), c.key[8:]) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := CheckAccountKey(payment.Bitcoin, "regtest", "account_key", addresses.SandboxKeys[payment.Bitcoin]); err != nil {
		t.Errorf("the sandbox's regtest key: %v", err)
	}
}
