// Package webhooks delivers paywatch's event log to the configured HTTP
// endpoints (api/openapi.yaml; docs/integrating.md "Webhook secrets and URLs").
//
// Guarantees:
//   - No POST is made inside a database transaction. A sender claims the
//     endpoint's next events (a token and an expiry, Options.ClaimFor, 30 s,
//     committed), POSTs them one at a time, and records each attempt in a
//     second transaction that checks the claim is still its own.
//   - At least once, in seq order, one event per POST, per endpoint. The
//     endpoint's cursor (webhook_endpoints.last_seq) moves past an event only
//     in the transaction that logs its successful attempt
//     (webhook_attempts), so a crash or restart at any instant re-sends, and
//     never skips, an event: a crash between a POST and its record leaves
//     the claim to expire, and the next sender sends the event again.
//     Receivers dedupe on the event id.
//   - One sender at a time per endpoint, across instances: while a claim is
//     live no other sender POSTs to the endpoint, and a POST is cut off when
//     its claim ends (instances' clocks must agree to well within
//     ClaimFor). Another instance polls and takes over within Options.Poll
//     of a claim's expiry when the holder dies; a sender that shuts down
//     releases its claim, so the next one goes on at once.
//   - Every request carries Paywatch-Signature: t=<unix>,v1=<hex
//     HMAC-SHA256(secret, "<t>.<raw body>")>; Verify is the receiver side.
//     Secrets come from the environment and are never logged.
//   - A failed delivery (network error, timeout, non-2xx, redirect) is
//     retried with exponential backoff and jitter (clock.Backoff from
//     Options.MinBackoff doubling to at most MaxBackoff, 1 h) for
//     GiveUpAfter (72 h). After
//     that the event is logged with outcome "failed" and the endpoint moves
//     on; an operator redelivers with `paywatch webhooks redeliver --endpoint
//     NAME --from-seq N`, which moves the cursor back.
//   - Senders wake on NOTIFY paywatch_events through the store's shared
//     listener, and poll as a safety net. Time comes from Options.Clock.
//   - Logs about an attempt are written after its record commits (the
//     record's transaction may be retried).
package webhooks
