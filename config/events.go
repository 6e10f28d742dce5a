package config

import (
	"time"
)

// Events configures GET /v1/events?wait= long-polls. One reader per
// instance serves every waiting client; these bound how many wait.
type Events struct {
	// MaxWaiters caps the long-polls waiting at once on this instance; one
	// more gets 429 rate_limited with Retry-After.
	MaxWaiters int `yaml:"max_waiters"`
	// MaxWaitersPerKey caps the long-polls of one API key waiting at once.
	MaxWaitersPerKey int `yaml:"max_waiters_per_key"`
	// PollInterval is how often the reader re-reads while clients wait even
	// without a NOTIFY (a safety net), and the Retry-After of a 429.
	PollInterval Duration `yaml:"poll_interval"`
}

// validateEvents checks the long-poll bounds of the events section.
func (c *Config) validateEvents() error {
	if c.Events.MaxWaiters < 1 || c.Events.MaxWaiters > 100000 {
		return invalid("events.max_waiters", "must be between 1 and 100000")
	}
	if c.Events.MaxWaitersPerKey < 1 || c.Events.MaxWaitersPerKey > c.Events.MaxWaiters {
		return invalid("events.max_waiters_per_key", "must be between 1 and events.max_waiters (%d)", c.Events.MaxWaiters)
	}
	if c.Events.PollInterval.Duration < 100*time.Millisecond || c.Events.PollInterval.Duration > time.Minute {
		return invalid("events.poll_interval", "must be between 100ms and 1m, got %s", c.Events.PollInterval)
	}
	return nil
}
