// Package webhooks delivers paywatch's event log to the configured HTTP
// endpoints (API.md "Events and webhooks").
//
// Guarantees:
//   - At least once, in seq order, one event per POST, per endpoint. The
//     endpoint's cursor (webhook_endpoints.last_seq) moves past an event only
//     in the transaction that logs its successful attempt
//     (webhook_attempts), so a crash or restart at any instant re-sends, and
//     never skips, an event. Receivers dedupe on the event id.
//   - One sender at a time per endpoint, across instances: a delivery runs in
//     a transaction holding the endpoint's row (SELECT … FOR UPDATE SKIP
//     LOCKED); another instance skips it and polls, and takes over within
//     Options.Poll when the holder dies.
//   - Every request carries Paywatch-Signature: t=<unix>,v1=<hex
//     HMAC-SHA256(secret, "<t>.<raw body>")>; Verify is the receiver side.
//     Secrets come from the environment and are never logged.
//   - A failed delivery (network error, timeout, non-2xx, redirect) is
//     retried with exponential backoff and jitter (Options.MinBackoff
//     doubling to at most MaxBackoff, 1 h) for GiveUpAfter (72 h). After
//     that the event is logged with outcome "failed" and the endpoint moves
//     on; an operator redelivers with `paywatch webhooks redeliver --endpoint
//     NAME --from-seq N`, which moves the cursor back.
//   - Senders wake on NOTIFY paywatch_events through the store's shared
//     listener, and poll as a safety net.
package webhooks
