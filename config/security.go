package config

import "github.com/paywatch/paywatch/payment"

// Finance bounds finance's decisions (issue 22).
type Finance struct {
	// MaxOverrideCreditUSD is the most a credit_account may credit at a
	// rate the rate book does not confirm (an override with a reason).
	// "0" refuses every override. Default "100.00".
	MaxOverrideCreditUSD string `yaml:"max_override_credit_usd"`
}

func defaultFinance() Finance { return Finance{MaxOverrideCreditUSD: "100.00"} }

// validateSecurity checks the sections of security.go.
func (c *Config) validateSecurity() error {
	if _, err := payment.ParseUSD(c.Finance.MaxOverrideCreditUSD); err != nil {
		return invalid("finance.max_override_credit_usd", "must be a USD amount like \"100.00\" (\"0\" refuses every override): %v", err)
	}
	return nil
}
