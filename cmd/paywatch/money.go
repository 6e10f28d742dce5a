package main

import "context"

// moneyCommands returns the finance and webhook subcommands.
func moneyCommands() map[string]command { return map[string]command{} }

// extraServices returns background services beyond the core (webhooks).
func (d *daemon) extraServices() []func(ctx context.Context) error { return nil }
