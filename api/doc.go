// Package api serves paywatch's HTTP JSON API (api/openapi.yaml): storefront intents
// and payables, balances and debits, the event feed, the finance inbox and
// reports, and operator status and rescans.
//
// Guarantees: every request body is size-limited and decoded strictly
// (unknown fields, trailing data and wrong types are 400 invalid_request);
// every error has the api/openapi.yaml shape {"error":{"code","message"}}; a request
// that fails changes nothing (each write is one transaction); API keys are
// compared by SHA-256 hash and never logged; a key without the route's scope
// is 403, a missing or unknown key 401. Event long-polls are answered by one
// reader per process (Server.Run): one query per wake-up whatever the number
// of waiters, each waiter getting exactly what the non-waiting feed returns
// after its cursor; waiters are capped per key and in total (429).
package api
