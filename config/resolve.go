package config

import (
	"fmt"
	"math/big"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/paywatch/paywatch/payment"
)

// Validate parses every value written as a string (amounts, schedules)
// once and keeps the result here, so no caller parses the config again:
// the accessors below return what Validate resolved. Default resolves its
// own values, so a default config is usable as it is.

// resolve parses what Validate resolves, for Default (whose values are
// known good) and for a config whose sections Validate did not reach.
func (c *Config) resolve() error {
	if err := c.resolveProxies(); err != nil {
		return err
	}
	if err := c.Checkout.resolveProxies(); err != nil {
		return err
	}
	if err := c.resolveTopups(); err != nil {
		return err
	}
	if err := c.resolveSweep(); err != nil {
		return err
	}
	for name, m := range c.Methods {
		info, ok := payment.LookupMethod(name)
		if !ok {
			return invalid("methods."+string(name), "unknown method")
		}
		if err := m.resolve("methods."+string(name), info); err != nil {
			return err
		}
	}
	if err := c.Rates.resolveMaxDeviation(); err != nil {
		return err
	}
	if err := c.Rates.resolveRefresh(); err != nil {
		return err
	}
	if err := c.Rates.resolveStatic(); err != nil {
		return err
	}
	if err := c.Reconcile.resolve(); err != nil {
		return err
	}
	return c.Finance.resolve()
}

// parseSchedule parses a robfig/cron schedule as the daemon runs it
// (cron.ParseStandard), refusing one that never fires.
func parseSchedule(field, spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, invalid(field, "%q is not a cron schedule like \"@every 30s\", \"@hourly\" or \"*/5 * * * *\": %v", spec, err)
	}
	if s.Next(time.Now()).IsZero() {
		return nil, invalid(field, "%q never fires", spec)
	}
	return s, nil
}

func (c *Config) resolveTopups() error {
	c.topups = make([]payment.Cents, len(c.TopupAmounts))
	for i, a := range c.TopupAmounts {
		v, err := payment.ParseUSD(a)
		if err != nil || v <= 0 {
			return invalid(fmt.Sprintf("topup_amounts[%d]", i), "%q is not a positive USD amount with at most 2 decimals", a)
		}
		c.topups[i] = v
	}
	return nil
}

func (c *Config) resolveSweep() error {
	s, err := parseSchedule("expiry_sweep", c.ExpirySweep)
	c.sweep = s
	return err
}

// SweepSchedule is expiry_sweep: when the deadline sweep runs.
func (c *Config) SweepSchedule() cron.Schedule { return c.sweep }

// Topups are topup_amounts in cents, in the config's order.
func (c *Config) Topups() []payment.Cents { return append([]payment.Cents(nil), c.topups...) }

// resolve parses the method's amounts; f is its key (methods.BTC).
func (m *Method) resolve(f string, info payment.MethodInfo) error {
	m.large, m.largeUSD = false, 0
	if m.LargeAmountUSD != "" {
		v, err := payment.ParseUSD(m.LargeAmountUSD)
		if err != nil {
			return invalid(f+".large_amount_usd", "%v", err)
		}
		m.large, m.largeUSD = true, v
	}
	tol, err := payment.ParseUnits(m.UnderpaymentTolerance, info.Decimals)
	if err != nil {
		return invalid(f+".underpayment_tolerance", "%v", err)
	}
	dust, err := payment.ParseUnits(m.DustMin, info.Decimals)
	if err != nil {
		return invalid(f+".dust_min", "%v", err)
	}
	m.tolerance, m.dust = tol, dust
	return nil
}

// LargeAmount is large_amount_usd in cents; false when it is off.
func (m *Method) LargeAmount() (payment.Cents, bool) { return m.largeUSD, m.large }

// Tolerance is underpayment_tolerance in the asset's base units (a new
// value the caller may change).
func (m *Method) Tolerance() *big.Int { return newInt(m.tolerance) }

// Dust is dust_min in the asset's base units (a new value the caller may
// change).
func (m *Method) Dust() *big.Int { return newInt(m.dust) }

func newInt(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(v)
}

func (r *Rates) resolveMaxDeviation() error {
	// Six decimals at most, as a fraction: 0.02 is 2%.
	v, err := payment.ParseUnits(r.MaxDeviation, 6)
	if err != nil {
		return invalid("rates.max_deviation", "%v", err)
	}
	r.maxDeviation = new(big.Rat).SetFrac(v, big.NewInt(1_000_000))
	return nil
}

func (r *Rates) resolveRefresh() error {
	s, err := parseSchedule("rates.refresh", r.Refresh)
	r.refresh = s
	return err
}

func (r *Rates) resolveStatic() error {
	r.static = make(map[string]*big.Rat, len(r.Static))
	for sym, p := range r.Static {
		v, err := payment.ParseUnits(p, 18)
		if err != nil || v.Sign() <= 0 {
			return invalid("rates.static."+sym, "%q is not a positive decimal price", p)
		}
		r.static[sym] = new(big.Rat).SetFrac(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	}
	return nil
}

// StaticPrices are rates.static in USD per unit (new values the caller may
// change).
func (r *Rates) StaticPrices() map[string]*big.Rat {
	out := make(map[string]*big.Rat, len(r.static))
	for sym, p := range r.static {
		out[sym] = new(big.Rat).Set(p)
	}
	return out
}

// RefreshSchedule is rates.refresh: when the rate book refreshes.
func (r *Rates) RefreshSchedule() cron.Schedule { return r.refresh }

// MaxDeviationFraction is rates.max_deviation as a fraction (0.02 is 2%),
// a new value the caller may change.
func (r *Rates) MaxDeviationFraction() *big.Rat {
	if r.maxDeviation == nil {
		return new(big.Rat)
	}
	return new(big.Rat).Set(r.maxDeviation)
}

func (r *Reconcile) resolve() error {
	r.schedule = nil
	if r.Schedule == "" {
		return nil
	}
	s, err := parseSchedule("reconcile.schedule", r.Schedule)
	r.schedule = s
	return err
}

// CronSchedule is reconcile.schedule; nil when unset (the reconciler's
// default, hourly).
func (r *Reconcile) CronSchedule() cron.Schedule { return r.schedule }

func (f *Finance) resolve() error {
	v, err := payment.ParseUSD(f.MaxOverrideCreditUSD)
	if err != nil {
		return invalid("finance.max_override_credit_usd", "must be a USD amount like \"100.00\" (\"0\" refuses every override): %v", err)
	}
	f.maxOverride = v
	return nil
}

// MaxOverrideCredit is finance.max_override_credit_usd in cents.
func (f *Finance) MaxOverrideCredit() payment.Cents { return f.maxOverride }
