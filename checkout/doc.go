// Package checkout serves the hosted payment page: one page per intent at
// {checkout.public_base_url}/pay/{token}, which a storefront links or
// redirects its customer to. The page shows what is paid, the method and
// network in words with a warning, the exact amount and the address with
// copy buttons, the QR code of the payment URI, the locked rate and a
// countdown, and the payment's state, which changes without a reload. An
// "I have paid" button records the customer's report.
//
// Guarantees:
//   - Capability URL: the token is the intent's id encrypted and
//     authenticated with keys derived from the server's secret (Links):
//     nothing is stored, it cannot be computed from the intent id nor
//     forged, and it is checked in constant time before anything is read.
//     A malformed, forged or expired token (checkout.link_lifetime after the
//     deadline) and any other path under /pay/ get the same plain 404 page.
//   - Nothing private: the page is built from a fixed set of the intent's
//     fields (pageData, statusData): the kind, reference and USD amount, the
//     method, amount, address, payment URI, rate and deadline, and the
//     state. Never the account, an API key, an internal id, a node or an
//     error's text (a failure is a generic page; the log has the cause,
//     with the token cut short).
//   - Words: every word comes from one catalogue (messages.go) in English,
//     German, French and Indonesian, chosen by the page's switch (?lang=),
//     else the storefront's locale, else Accept-Language; templates hold
//     markup only. Numbers are written the language's way, a coin amount
//     with every digit (only its decimal mark changes); times are in UTC
//     and the script shows them in the browser's time zone.
//     Each state (StateOf, a pure function of the intent's view and the
//     time) has its own words and next step; money that arrived but does
//     not pay is "with the shop for review", never "lost".
//   - Live without polling per page: one Hub per process follows the event
//     feed's NOTIFY (the store's shared LISTEN connection), reads the new
//     events' intent ids once per wake whatever the number of pages, and
//     reads each changed intent once for all its pages; the pages waiting
//     for confirmations are re-checked every checkout.progress_interval in
//     one query. A page's stream (server-sent events) sends its state's
//     status fragment rendered in its language, and ends when it is paid.
//   - Safe to expose: a strict Content-Security-Policy (scripts and styles
//     from /pay/static/ only), framing only by checkout.frame_ancestors, no
//     referrer, no cookies, no caching but of the static files, per-client
//     rate limits (checkout.requests_per_minute) and bounded open streams
//     (checkout.max_live, checkout.max_live_per_client). The return button
//     is shown only for http(s) URLs to checkout.return_hosts, checked when
//     the intent is created and again when the page is shown.
//   - "I have paid" goes through intents.Service.Report, the rule of POST
//     /v1/intents/{id}/report: a report, not a confirmation; the first
//     time is kept.
//
// A payable's page (/pay/p/{token}, a token of keys of its own) lists the
// enabled methods for a payable made with POST /v1/payables; the intent
// is made when the customer picks one (Payables.Choose), and a later pick
// replaces the open intent unless a payment was seen on it.
package checkout
