// Package daemon is paywatch's composition root: it builds one paywatch
// instance from a validated config, and runs it.
//
// New opens and migrates the database, builds the rate book, the address
// derivers, the node clients, the payment core (intents), finance, reports,
// the scanners' sink, the networks' availability, the HTTP API, the payment
// pages and the console, and the metrics; Run serves the listeners and runs
// every background loop (the services, the deadline sweeps, the reconciler,
// the webhook senders, one scanner leader per network) in one errgroup
// until its context ends. Deps carries what a caller gives instead of the
// config: a test's clock, store, scripted chains and rate book. cmd/paywatch
// (serve), paywatchtest and through it the simulator build the daemon
// here, so it is wired in one place.
//
// daemon is the only package that imports every other; nothing below it
// imports it (TestLayering).
package daemon
