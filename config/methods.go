package config

import (
	"math/big"
	"strings"

	"github.com/paywatch/paywatch/payment"
)

// Method configures one payment method.
type Method struct {
	// Enabled switches the method on.
	Enabled bool `yaml:"enabled"`
	// Confirmations required before a transfer counts as confirmed; 0 means
	// the network's finality (Tron solidified, Solana and Ethereum finalized).
	Confirmations *int `yaml:"confirmations"`
	// LargeAmountUSD: intents at or above this USD amount need
	// LargeConfirmations instead ("" = off).
	LargeAmountUSD string `yaml:"large_amount_usd"`
	// LargeConfirmations for large intents (0 = finality).
	LargeConfirmations *int `yaml:"large_confirmations"`
	// UnderpaymentTolerance in the asset's units ("0.000001"): an intent is
	// paid when the confirmed sum reaches amount minus this.
	UnderpaymentTolerance string `yaml:"underpayment_tolerance"`
	// DisplayDecimals: amounts are rounded up to this many decimals.
	DisplayDecimals *int `yaml:"display_decimals"`
	// DustMin in the asset's units: smaller transfers are dust.
	DustMin string `yaml:"dust_min"`
	// Contract is the token contract (tokens only); default the mainnet one.
	Contract string `yaml:"contract"`

	// Resolved by Validate (and Default): LargeAmountUSD in cents (large
	// false when off), UnderpaymentTolerance and DustMin in base units.
	large     bool
	largeUSD  payment.Cents
	tolerance *big.Int
	dust      *big.Int
}

func defaultMethod(m payment.MethodInfo) *Method {
	display := m.Decimals
	dust := "0"
	switch m.Method {
	case payment.ETH:
		display = 8
		dust = "0.000001"
	case payment.BTC, payment.LTC:
		dust = "0.00000546"
	case payment.USDTERC20, payment.USDCERC20, payment.USDTTRC20:
		display = 2
		dust = "0.01"
	case payment.TRX:
		display = 2
		dust = "0.1"
	case payment.SOL:
		display = 6
		dust = "0.00001"
	}
	return &Method{
		Confirmations:         intp(m.DefaultConfirmations),
		LargeConfirmations:    nil,
		UnderpaymentTolerance: "0",
		DisplayDecimals:       intp(display),
		DustMin:               dust,
		Contract:              m.MainnetContract,
	}
}

func (c *Config) validateMethod(name payment.Method) error {
	info, ok := payment.LookupMethod(name)
	if !ok {
		return invalid("methods."+string(name), "unknown method")
	}
	m := c.Methods[name]
	f := "methods." + string(name)
	if m.Confirmations == nil || *m.Confirmations < 0 || *m.Confirmations > 10000 {
		return invalid(f+".confirmations", "must be between 0 and 10000")
	}
	if (info.Network == payment.Bitcoin || info.Network == payment.Litecoin) && *m.Confirmations == 0 {
		return invalid(f+".confirmations", "must be at least 1: %s has no finality marker", info.Network)
	}
	if err := m.resolve(f, info); err != nil {
		return err
	}
	if m.LargeAmountUSD != "" {
		if m.LargeConfirmations == nil {
			return invalid(f+".large_confirmations", "must be set when large_amount_usd is")
		}
		if *m.LargeConfirmations < 0 || *m.LargeConfirmations > 10000 {
			return invalid(f+".large_confirmations", "must be between 0 and 10000")
		}
		if (info.Network == payment.Bitcoin || info.Network == payment.Litecoin) && *m.LargeConfirmations == 0 {
			// A large payment would confirm with 0 blocks: at once, in the
			// mempool, on a chain where nothing is ever final.
			return invalid(f+".large_confirmations", "must be at least 1: %s has no finality marker", info.Network)
		}
	}
	if m.DisplayDecimals == nil || *m.DisplayDecimals < 0 || *m.DisplayDecimals > info.Decimals {
		return invalid(f+".display_decimals", "must be between 0 and %d", info.Decimals)
	}
	if info.Asset != payment.Native && m.Enabled && m.Contract == "" {
		return invalid(f+".contract", "token methods need their contract address")
	}
	if m.Enabled {
		n := c.Networks[info.Network]
		if n == nil || !n.Enabled {
			return invalid(f+".enabled", "method needs networks.%s.enabled", info.Network)
		}
	}
	return nil
}

// MethodConfirmations returns the confirmations an intent of usd needs.
func (c *Config) MethodConfirmations(m payment.Method, usd payment.Cents) int {
	mc := c.Methods[m]
	if large, ok := mc.LargeAmount(); ok && mc.LargeConfirmations != nil && usd >= large {
		return *mc.LargeConfirmations
	}
	return *mc.Confirmations
}

func methodNames() string {
	var out []string
	for _, m := range payment.Methods {
		out = append(out, string(m.Method))
	}
	return strings.Join(out, ", ")
}
