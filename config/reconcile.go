package config

import (
	"github.com/robfig/cron/v3"
)

// Reconcile configures the reconciler: on a schedule and on demand it
// compares the node's own view of our addresses over scanned block ranges
// with what paywatch recorded (package reconcile, docs/operating.md "The reconciler").
// Zero values take the package's defaults.
type Reconcile struct {
	// Schedule is a robfig/cron schedule; default "@hourly".
	Schedule string `yaml:"schedule"`
	// schedule is Schedule parsed; nil when unset (CronSchedule).
	schedule cron.Schedule
	// Blocks is the fewest blocks below the cursor a run checks again
	// (default 100); MaxBlocks caps a run (default 2000).
	Blocks    int64 `yaml:"blocks"`
	MaxBlocks int64 `yaml:"max_blocks"`
	// SampleAddresses is how many addresses a Solana run lists, on top of
	// those that received something in the range (default 50).
	SampleAddresses int `yaml:"sample_addresses"`
	// RatePerSecond is each node's call budget for the reconciler, on top
	// of the scanner's (default 10).
	RatePerSecond float64 `yaml:"rate_per_second"`
}

// validateReconcile checks the reconcile section: a schedule robfig/cron
// parses, counts and a call budget within bounds (zero: the defaults).
func (c *Config) validateReconcile() error {
	r := c.Reconcile
	if err := c.Reconcile.resolve(); err != nil {
		return err
	}
	if r.Blocks < 0 || r.Blocks > 1_000_000 {
		return invalid("reconcile.blocks", "must be between 0 (the default, 100) and 1000000, got %d", r.Blocks)
	}
	if r.MaxBlocks < 0 || r.MaxBlocks > 1_000_000 {
		return invalid("reconcile.max_blocks", "must be between 0 (the default, 2000) and 1000000, got %d", r.MaxBlocks)
	}
	if r.MaxBlocks > 0 && r.Blocks > r.MaxBlocks {
		return invalid("reconcile.blocks", "must not exceed reconcile.max_blocks (%d), got %d", r.MaxBlocks, r.Blocks)
	}
	if r.SampleAddresses < 0 || r.SampleAddresses > 100_000 {
		return invalid("reconcile.sample_addresses", "must be between 0 (the default, 50) and 100000, got %d", r.SampleAddresses)
	}
	if !(r.RatePerSecond >= 0 && r.RatePerSecond <= 10_000) { // NaN fails too
		return invalid("reconcile.rate_per_second", "must be between 0 (the default, 10) and 10000 calls a second, got %v", r.RatePerSecond)
	}
	return nil
}
