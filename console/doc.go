// Package console is paywatch's browser console, served by the daemon at
// /console/ on the API listener: the finance inbox and resolutions,
// reconciliation, balances, intent and payable lookup, network status,
// rescans and webhook deliveries.
//
// Guarantees:
//   - It shows what the JSON API shows: every screen reads through the same
//     intents, finance and reports services and store functions as the api
//     handlers, and every action (resolve, rescan, redeliver) goes through
//     the same service or store call, so validation and error texts are the
//     API's.
//   - Pages are server-rendered with html/template from embedded files; the
//     small script in static/ only enhances them (live counts, keyboard
//     navigation, local times), and every action works as a plain form.
//   - A person signs in with an API key sent in a POST body, never in a
//     URL. The session cookie is HttpOnly, SameSite=Strict, Secure over TLS
//     or when configured, and only its SHA-256 hash is stored (with its
//     expiry) in PostgreSQL; signing out deletes it. The key's scopes decide
//     the screens (finance, operator, storefront), checked on every request.
//   - Every state-changing request carries a CSRF token derived from the
//     session secret; every page sends a strict Content-Security-Policy with
//     frame-ancestors 'none'. Failed sign-ins are rate-limited per client
//     address.
//   - One-time sign-in links (sandbox only, Options.SignInLinks) are
//     single-use, short-lived tokens exchanged for a session; they are not
//     API keys.
package console
