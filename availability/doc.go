// Package availability owns whether a network takes new payments: it reads
// each scanner's cursor (health, lag, last report) and answers
// GET /v1/status and the check intent creation makes (intents.ChainStatus).
//
// Guarantees:
//   - A network is available only when its scanner is enabled, healthy, not
//     critical, reported within three poll intervals plus a minute, and at
//     most max_lag_blocks behind its node.
//   - No node URL or secret reaches an answer: the scanner's errors are
//     redacted (chains.RedactText) before they are shown.
//   - A cached answer (CacheFor) is never older than CacheFor, and an answer
//     cut short by a cancelled request is not cached.
package availability
