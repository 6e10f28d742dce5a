package config

import (
	"github.com/paywatch/paywatch/payment"
)

// Finance bounds finance's decisions (issue 22).
type Finance struct {
	// MaxOverrideCreditUSD is the most a credit_account may credit at a
	// rate the rate book does not confirm (an override with a reason).
	// "0" refuses every override. Default "100.00".
	MaxOverrideCreditUSD string `yaml:"max_override_credit_usd"`

	// maxOverride is MaxOverrideCreditUSD in cents (MaxOverrideCredit).
	maxOverride payment.Cents
}

func defaultFinance() Finance { return Finance{MaxOverrideCreditUSD: "100.00"} }

// Limits bound what one API key may ask of the daemon (issue 22, item 5).
type Limits struct {
	// CreatesPerMinute refills each API key's token bucket for POST
	// /v1/intents and POST /v1/intents/{id}/renew (each takes an address);
	// an empty bucket is 429 rate_limited with Retry-After. 0: no limit.
	// Default 120.
	CreatesPerMinute int `yaml:"creates_per_minute"`
	// CreateBurst is the bucket's size: how many creations a key may make
	// at once. Default 60.
	CreateBurst int `yaml:"create_burst"`
	// OpenIntentsPerPayable caps the open intents (awaiting payment before
	// their deadline, or detected) one payable may have at once, over all
	// its methods: a creation past it is 409 too_many_open_intents and
	// takes no address. A creation for a method the payable already has
	// open answers that intent instead (200), whatever the cap. 0: no cap.
	// Default 4.
	OpenIntentsPerPayable int `yaml:"open_intents_per_payable"`
}

func defaultLimits() Limits {
	return Limits{CreatesPerMinute: 120, CreateBurst: 60, OpenIntentsPerPayable: 4}
}

// validateSecurity checks the sections of security.go.
func (c *Config) validateSecurity() error {
	if err := c.Finance.resolve(); err != nil {
		return err
	}
	if c.Limits.CreatesPerMinute < 0 || c.Limits.CreatesPerMinute > 1_000_000 {
		return invalid("limits.creates_per_minute", "must be between 0 (no limit) and 1000000")
	}
	if c.Limits.CreatesPerMinute > 0 && (c.Limits.CreateBurst < 1 || c.Limits.CreateBurst > 1_000_000) {
		return invalid("limits.create_burst", "must be between 1 and 1000000")
	}
	if c.Limits.OpenIntentsPerPayable < 0 || c.Limits.OpenIntentsPerPayable > 1000 {
		return invalid("limits.open_intents_per_payable", "must be between 0 (no cap) and 1000, got %d", c.Limits.OpenIntentsPerPayable)
	}
	return nil
}
