// Package intentstest assembles a real paywatch core for tests: a fresh
// PostgreSQL database with migrations, the intents service with static
// rates and the sandbox's public keys, the HTTP API on an httptest server,
// API keys per scope, and a scripted chain (chainstest.Fake) with its
// scanner per network. Nothing is mocked but the chain.
package intentstest
