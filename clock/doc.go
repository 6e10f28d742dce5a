// Package clock is the one source of time and of retry delays for the
// daemon's long-lived loops (scanner, webhook sender, leases).
//
// Guarantees:
//   - Clock is injected: production code takes a Clock (Real by default)
//     and never calls time.Now, time.After or time.NewTimer for a decision
//     or a wait, so a test drives time with a Fake and waits on conditions
//     (Fake.BlockUntil), never on sleeps.
//   - A Fake's timers fire only when the test moves the clock (Advance,
//     Set) past their deadline, in deadline order; a stopped timer never
//     fires and no longer counts as a waiter.
//   - Backoff is exponential (Min·Factor^(n−1), capped at Max) with a
//     jittered share, and is deterministic for a given Rand: a test that
//     injects a seeded source sees the same delays on every run.
package clock
