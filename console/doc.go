// Package console is paywatch's browser console, served by the daemon at
// /console/ on the API listener (or on admin_listen): the finance inbox and resolutions,
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
//     URL. The session cookie is HttpOnly and SameSite=Strict; it is Secure,
//     with the __Host- prefix and HSTS, unless the console listens on
//     loopback (and then still over TLS, or when a trusted proxy says
//     https). Only its SHA-256 hash is stored in PostgreSQL, with its
//     absolute expiry and its last use: a session ends after
//     console.session_ttl, after console.idle_timeout without use (the live
//     refresh is not use), at sign-out, or when an operator ends it by id.
//     The key's scopes decide the screens (finance, operator, storefront),
//     checked on every request.
//   - Every state-changing request carries a CSRF token derived from the
//     session secret; every page sends a strict Content-Security-Policy with
//     frame-ancestors 'none'.
//   - Failed sign-ins are counted per client (the peer, or behind a trusted
//     proxy the address it forwards for; an IPv6 client per /64), at most
//     10,000 clients remembered, the oldest unthrottled forgotten first.
//     Beyond console.signin_attempts a minute a wrong key is answered 429;
//     a valid key always signs in.
//   - The live refresh's long-polls are the API event feed's, under its
//     caps (429 beyond them).
//   - One-time sign-in links (sandbox only, Options.SignInLinks; refused on
//     mainnet) carry a single-use, short-lived token in the URL fragment,
//     which no server or proxy sees; it is exchanged for a session by a
//     POST the person confirms. They are not API keys.
package console
