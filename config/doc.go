// Package config loads and validates paywatch's YAML configuration.
//
// Guarantees: unknown keys are rejected; every field has its default in one
// place (Default); Validate names the offending field ("methods.BTC.confirmations:
// …"); secrets (database password, node credentials, API keys, webhook
// secrets) can come from the environment, and String never prints them.
package config
