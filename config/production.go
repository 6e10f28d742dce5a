package config

import (
	"fmt"

	"github.com/paywatch/paywatch/addresses"
)

// validateProduction refuses, once any enabled network is on mainnet, the
// settings that only make sense in the sandbox: an account key of a public
// test mnemonic (its private keys are anyone's, so deposits to its
// addresses are anyone's to take), static rates (a made-up price for real
// payments) and one-time sign-in links (a session without an API key).
func (c *Config) validateProduction() error {
	mainnet := c.MainnetNetworks()
	if len(mainnet) == 0 {
		return nil
	}
	first := "networks." + string(mainnet[0]) + " is on chain: mainnet"
	for _, n := range mainnet {
		nc := c.Networks[n]
		if what, ok := addresses.WellKnownTestKey(nc.AccountKey); ok {
			return invalid("networks."+string(n)+".account_key", "%s is the well-known test key %s: its private keys are public, "+
				"so anyone can take what is paid to its addresses; chain: mainnet needs the account key of your own wallet",
				abbreviate(nc.AccountKey), what)
		}
	}
	for i, s := range c.Rates.Sources {
		if s == "static" {
			return invalid(fmt.Sprintf("rates.sources[%d]", i), "static prices are for the sandbox and tests, and %s: "+
				"real payments would be quoted at a made-up rate; list live sources (coinbase, kraken, binance, coingecko)", first)
		}
	}
	if c.Console.SignInLinks {
		return invalid("console.signin_links", "one-time sign-in links are the sandbox's, and %s: "+
			"they open a session without an API key; sign in with an API key instead", first)
	}
	if sc := c.Console.SecureCookies; c.Console.Enabled && sc != nil && !*sc && !LoopbackAddr(c.ConsoleListen()) {
		return invalid("console.secure_cookies", "is false on %s, which is not loopback, and %s: a session cookie "+
			"sent over plain http is a finance clerk's key to whoever reads the traffic; terminate TLS in front "+
			"and leave secure_cookies unset", c.ConsoleListen(), first)
	}
	return nil
}

// abbreviate shortens a public key for a message: its first and last
// characters name it.
func abbreviate(k string) string {
	if len(k) <= 16 {
		return k
	}
	return k[:8] + "…" + k[len(k)-6:]
}
