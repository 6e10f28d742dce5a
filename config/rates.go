package config

import (
	"fmt"
	"math/big"
	"time"

	"github.com/robfig/cron/v3"
)

// Rates configures the exchange-rate sources.
type Rates struct {
	// Sources are provider names: coinbase, kraken, binance, coingecko, static.
	Sources []string `yaml:"sources"`
	// Refresh is a robfig/cron schedule.
	Refresh string `yaml:"refresh"`
	// MaxAge after which a source's price is stale.
	MaxAge Duration `yaml:"max_age"`
	// MaxDeviation drops a source further than this fraction from the median.
	MaxDeviation string `yaml:"max_deviation"`
	// MinSources fresh, agreeing prices needed for a quote. Default 2: a
	// single-source setup must say min_sources: 1 (and /v1/status shows it).
	MinSources int `yaml:"min_sources"`
	// Static prices (symbol → USD) used only when "static" is a source.
	Static map[string]string `yaml:"static"`
	// BaseURLs overrides a provider's API base URL (e.g. a proxy).
	BaseURLs map[string]string `yaml:"base_urls"`

	// Resolved by Validate (and Default): Refresh, MaxDeviation and Static
	// parsed.
	refresh      cron.Schedule
	maxDeviation *big.Rat
	static       map[string]*big.Rat
}

func (c *Config) validateRates() error {
	r := c.Rates
	if len(r.Sources) == 0 {
		return invalid("rates.sources", "must list at least one source")
	}
	for i, s := range r.Sources {
		switch s {
		case "coinbase", "kraken", "binance", "coingecko":
		case "static":
			if len(r.Static) == 0 {
				return invalid("rates.static", "must list prices when the static source is used")
			}
		default:
			return invalid(fmt.Sprintf("rates.sources[%d]", i), "unknown source %q (coinbase, kraken, binance, coingecko, static)", s)
		}
	}
	if err := c.Rates.resolveStatic(); err != nil {
		return err
	}
	if r.MaxAge.Duration < time.Second {
		return invalid("rates.max_age", "must be at least 1s")
	}
	if err := c.Rates.resolveMaxDeviation(); err != nil {
		return err
	}
	if len(r.Sources) == 1 && r.MinSources != 1 {
		return invalid("rates.min_sources", "is %d but only one source is listed: a single-source setup must say min_sources: 1 explicitly, or list a second source", r.MinSources)
	}
	if r.MinSources < 1 || r.MinSources > len(r.Sources) {
		return invalid("rates.min_sources", "must be between 1 and the number of sources")
	}
	if r.Refresh == "" {
		return invalid("rates.refresh", "must be a cron schedule such as @every 30s")
	}
	return c.Rates.resolveRefresh()
}
