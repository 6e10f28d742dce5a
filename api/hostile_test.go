package api_test

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// A hostile value and the class it belongs to. Every slot refuses the
// broken class; slots with a shape (ids, names, enums, numbers, amounts)
// also refuse the path-like values, and strict slots (ids, enums, numbers)
// refuse the numeric forms too.
type hostile struct {
	name  string
	text  string // the value as it travels in a path, query or header
	json  string // the value as a JSON token; "" means text as a string
	class int
	// route: in a path the value changes the route itself ("/v1/a/../b"
	// is cleaned and redirected), so the router answers 404 not_found.
	route bool
}

const (
	broken  = iota // never valid anywhere: NUL, control, bad UTF-8, 100 kB
	pathish        // valid text, but no name, id or number looks like it
	numeric        // numbers written the way no API field accepts
)

var hostileValues = []hostile{
	{name: "NUL", text: "\x00", class: broken},
	{name: "embedded NUL", text: "ORD\x00-1", class: broken},
	{name: "JSON NUL escape", text: "\x00", json: `"ORD\u0000-1"`, class: broken},
	{name: "newline", text: "ORD-1\nX-Injected: 1", class: broken},
	{name: "carriage return", text: "\r", class: broken},
	{name: "escape sequence", text: "\x1b[31mred", class: broken},
	{name: "DEL", text: "a\x7fb", class: broken},
	{name: "C1 control", text: "a\u0085b", class: broken},
	{name: "lone surrogate bytes", text: "\xed\xa0\x80", class: broken},
	{name: "lone surrogate escape", text: "\xed\xa0\x80", json: `"\ud800"`, class: broken},
	{name: "overlong slash", text: "\xc0\xaf", class: broken},
	{name: "overlong NUL", text: "\xc0\x80", class: broken},
	{name: "3-byte overlong", text: "\xe0\x80\xaf", class: broken},
	{name: "invalid byte", text: "ORD-\xff", class: broken},
	{name: "truncated rune", text: "ORD-\xe2\x82", class: broken},
	{name: "100 kB", text: strings.Repeat("A", 100<<10), class: broken},
	{name: "dot dot", text: "..", class: pathish, route: true},
	{name: "traversal", text: "../../etc/passwd", class: pathish},
	{name: "slash", text: "/", class: pathish, route: true},
	{name: "literal %2F", text: "%2F", class: pathish},
	{name: "space", text: "a b", class: pathish},
	{name: "quote", text: `a"b'c`, class: pathish},
	{name: "SQL", text: "x' OR '1'='1", class: pathish},
	{name: "past int64", text: "99999999999999999999", json: "99999999999999999999", class: numeric},
	{name: "below int64", text: "-9223372036854775809", json: "-9223372036854775809", class: numeric},
	{name: "exponent", text: "1e3", json: "1e3", class: numeric},
	{name: "huge exponent", text: "1E400", json: "1E400", class: numeric},
	{name: "negative zero", text: "-0", json: "-0", class: numeric},
	{name: "negative", text: "-5", json: "-5", class: numeric},
	{name: "plus sign", text: "+5", class: numeric},
	{name: "leading space", text: " 5", class: numeric},
	{name: "trailing space", text: "5 ", class: numeric},
	{name: "tab padded", text: "\t5", class: broken},
	{name: "hex", text: "0x10", class: numeric},
	{name: "fraction", text: "1.5", json: "1.5", class: numeric},
	{name: "fraction slash", text: "1/3", class: numeric},
	{name: "NaN", text: "NaN", class: numeric},
	{name: "Infinity", text: "Infinity", class: numeric},
	{name: "underscore digits", text: "1_000", class: numeric},
}

// A slot is one place a request carries a value: a path parameter, a query
// parameter, a header or a JSON field of one route.
type slot struct {
	name   string
	method string
	scope  string
	// path returns the request path for v already escaped for its place.
	path func(v string) string
	// body returns the JSON body with the slot's field set to a raw token
	// (nil for no body).
	body   func(tok string) []byte
	header string
	strict int // the highest class the slot refuses (broken, pathish or numeric)
	// want is the answer for a refused value of each class.
	want [3]answer
	// jsonNumber: the slot is a JSON number (numeric tokens go in raw).
	jsonNumber bool
	// accepts names hostile values that are valid for this slot.
	accepts []string
	inPath  bool
}

type answer struct {
	status int
	code   string
}

var (
	bad      = answer{400, "invalid_request"}
	notFound = answer{404, "not_found"}
	badAmt   = answer{400, "invalid_amount"}
	badMeth  = answer{400, "unknown_method"}
)

func all(a answer) [3]answer { return [3]answer{a, a, a} }

// jsonString encodes s as a JSON string escaping only what JSON requires,
// so invalid UTF-8 reaches the server as it is (json.Marshal would replace
// it).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteString(strconv.FormatUint(uint64(c>>4), 16))
			b.WriteString(strconv.FormatUint(uint64(c&15), 16))
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// object builds a JSON object from raw tokens, in key order given.
func object(kv ...string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(kv[i]))
		b.WriteByte(':')
		b.WriteString(kv[i+1])
	}
	b.WriteByte('}')
	return []byte(b.String())
}

func q(s string) string { return jsonString(s) }

// TestHostileValuesNeverReachTheDatabase applies every hostile value to every
// path parameter, query parameter, header and JSON field of every route:
// each is refused at the edge with its documented status and code, never a
// 5xx, and no table changes.
func TestHostileValuesNeverReachTheDatabase(t *testing.T) {
	e := paywatchtest.New(t)
	iv := e.CreateIntent("order", "ORD-H", "cust-h", "10.00", "BTC")
	// A transfer id of the right shape that does not exist: a body field
	// that passes the edge then answers 404, so a 404 means "not validated".
	missingTr := store.NewID("tr")
	pathIn := func(format string) func(string) string {
		return func(v string) string { return strings.Replace(format, "{}", url.PathEscape(v), 1) }
	}
	queryIn := func(prefix, param string) func(string) string {
		return func(v string) string { return prefix + param + "=" + url.QueryEscape(v) }
	}
	fixed := func(p string) func(string) string { return func(string) string { return p } }
	createWith := func(field string) func(string) []byte {
		return func(tok string) []byte {
			m := map[string]string{"kind": q("order"), "reference": q("ORD-H2"), "account": q("cust-h"), "amount_usd": q("12.00"), "method": q("BTC")}
			m[field] = tok
			return object("kind", m["kind"], "reference", m["reference"], "account", m["account"], "amount_usd", m["amount_usd"], "method", m["method"])
		}
	}
	debitWith := func(field string) func(string) []byte {
		return func(tok string) []byte {
			m := map[string]string{"reference": q("D-1"), "amount_usd": q("1.00")}
			m[field] = tok
			return object("reference", m["reference"], "amount_usd", m["amount_usd"])
		}
	}
	resolveWith := func(action, field string) func(string) []byte {
		return func(tok string) []byte {
			m := map[string]string{"action": q(action), "note": q("reviewed")}
			switch action {
			case "credit_intent":
				m["intent_id"] = q(iv.ID)
			case "credit_account":
				m["account"] = q("cust-h")
			case "refunded":
				m["refund_txid"] = q("abcd")
			}
			m[field] = tok
			var kv []string
			for _, k := range []string{"action", "note", "intent_id", "account", "refund_txid", "usd_per_unit"} {
				if v, ok := m[k]; ok {
					kv = append(kv, k, v)
				}
			}
			return object(kv...)
		}
	}
	slots := []slot{
		// Path parameters.
		{name: "GET intent id", method: "GET", scope: "storefront", inPath: true, path: pathIn("/v1/intents/{}"), strict: numeric, want: all(notFound)},
		{name: "GET intent qr id", method: "GET", scope: "storefront", inPath: true, path: pathIn("/v1/intents/{}/qr.png"), strict: numeric, want: all(notFound)},
		{name: "report intent id", method: "POST", scope: "storefront", inPath: true, path: pathIn("/v1/intents/{}/report"), strict: numeric, want: all(notFound)},
		{name: "renew intent id", method: "POST", scope: "storefront", inPath: true, path: pathIn("/v1/intents/{}/renew"), strict: numeric, want: all(notFound)},
		{name: "payable kind", method: "GET", scope: "storefront", inPath: true, path: pathIn("/v1/payables/{}/ORD-H"), strict: numeric, want: all(bad)},
		{name: "payable reference", method: "GET", scope: "storefront", inPath: true, path: pathIn("/v1/payables/order/{}"), strict: pathish, want: all(bad)},
		{name: "balance account", method: "GET", scope: "storefront", inPath: true, path: pathIn("/v1/accounts/{}/balance"), strict: pathish, want: all(bad)},
		{name: "ledger account", method: "GET", scope: "storefront", inPath: true, path: pathIn("/v1/accounts/{}/ledger"), strict: pathish, want: all(bad)},
		{name: "debit account", method: "POST", scope: "storefront", inPath: true, path: pathIn("/v1/accounts/{}/debits"), body: func(string) []byte { return debitWith("")(q("D-1")) }, strict: pathish, want: all(bad)},
		{name: "GET transfer id", method: "GET", scope: "finance", inPath: true, path: pathIn("/v1/transfers/{}"), strict: numeric, want: all(notFound)},
		{name: "resolve transfer id", method: "POST", scope: "finance", inPath: true, path: pathIn("/v1/transfers/{}/resolve"), body: func(string) []byte { return resolveWith("ignore", "note")(q("spam")) }, strict: numeric, want: all(notFound)},
		{name: "rescan network", method: "POST", scope: "operator", inPath: true, path: pathIn("/v1/networks/{}/rescan"), body: func(string) []byte { return object("from_height", "0") }, strict: numeric, want: all(notFound)},
		// Query parameters.
		{name: "ledger after", method: "GET", scope: "storefront", path: queryIn("/v1/accounts/cust-h/ledger?", "after"), strict: numeric, want: all(bad)},
		{name: "ledger limit", method: "GET", scope: "storefront", path: queryIn("/v1/accounts/cust-h/ledger?", "limit"), strict: numeric, want: all(bad)},
		{name: "events after", method: "GET", scope: "storefront", path: queryIn("/v1/events?", "after"), strict: numeric, want: all(bad)},
		{name: "events limit", method: "GET", scope: "storefront", path: queryIn("/v1/events?", "limit"), strict: numeric, want: all(bad)},
		{name: "events wait", method: "GET", scope: "storefront", path: queryIn("/v1/events?", "wait"), strict: numeric, want: all(bad)},
		{name: "events type", method: "GET", scope: "storefront", path: queryIn("/v1/events?", "type"), strict: broken, want: all(bad)},
		{name: "transfers status", method: "GET", scope: "finance", path: queryIn("/v1/transfers?", "status"), strict: numeric, want: all(bad)},
		{name: "transfers network", method: "GET", scope: "finance", path: queryIn("/v1/transfers?", "network"), strict: numeric, want: all(bad)},
		{name: "transfers classification", method: "GET", scope: "finance", path: queryIn("/v1/transfers?", "classification"), strict: numeric, want: all(bad)},
		{name: "transfers after", method: "GET", scope: "finance", path: queryIn("/v1/transfers?", "after"), strict: numeric, want: all(bad)},
		{name: "transfers limit", method: "GET", scope: "finance", path: queryIn("/v1/transfers?", "limit"), strict: numeric, want: all(bad)},
		{name: "reconciliation from", method: "GET", scope: "finance", path: queryIn("/v1/reports/reconciliation?to=2026-12-01&", "from"), strict: numeric, want: all(bad)},
		{name: "reconciliation to", method: "GET", scope: "finance", path: queryIn("/v1/reports/reconciliation?from=2026-11-01&", "to"), strict: numeric, want: all(bad)},
		{name: "reconciliation format", method: "GET", scope: "finance", path: queryIn("/v1/reports/reconciliation?from=2026-11-01&to=2026-12-01&", "format"), strict: numeric, want: all(bad)},
		{name: "reconciliation as_of", method: "GET", scope: "finance", path: queryIn("/v1/reports/reconciliation?from=2026-11-01&to=2026-12-01&", "as_of"), strict: numeric, want: all(bad)},
		{name: "close from", method: "POST", scope: "finance", path: fixed("/v1/reports/closes"), body: func(tok string) []byte { return object("from", tok, "to", q("2026-12-01")) }, strict: numeric, want: all(bad)},
		{name: "close to", method: "POST", scope: "finance", path: fixed("/v1/reports/closes"), body: func(tok string) []byte { return object("from", q("2026-11-01"), "to", tok) }, strict: numeric, want: all(bad)},
		{name: "deliveries before", method: "GET", scope: "operator", path: queryIn("/v1/webhooks/deliveries?", "before"), strict: numeric, want: all(bad)},
		{name: "deliveries limit", method: "GET", scope: "operator", path: queryIn("/v1/webhooks/deliveries?", "limit"), strict: numeric, want: all(bad)},
		{name: "deliveries endpoint", method: "GET", scope: "operator", path: queryIn("/v1/webhooks/deliveries?", "endpoint"), strict: broken, want: all(bad)},
		{name: "methods unknown param", method: "GET", scope: "storefront", path: queryIn("/v1/methods?", "x"), strict: broken, want: all(bad)},
		// Headers.
		{name: "create Idempotency-Key", method: "POST", scope: "storefront", path: fixed("/v1/intents"), body: func(string) []byte { return createWith("")(q("ORD-H2")) }, header: "Idempotency-Key", strict: broken, want: all(bad)},
		// JSON fields.
		{name: "create kind", method: "POST", scope: "storefront", path: fixed("/v1/intents"), body: createWith("kind"), strict: numeric, want: all(bad)},
		{name: "create reference", method: "POST", scope: "storefront", path: fixed("/v1/intents"), body: createWith("reference"), strict: pathish, want: all(bad)},
		{name: "create account", method: "POST", scope: "storefront", path: fixed("/v1/intents"), body: createWith("account"), strict: pathish, want: all(bad)},
		{name: "create amount_usd", method: "POST", scope: "storefront", path: fixed("/v1/intents"), body: createWith("amount_usd"), strict: numeric, accepts: []string{"fraction"}, want: [3]answer{bad, badAmt, badAmt}},
		{name: "create method", method: "POST", scope: "storefront", path: fixed("/v1/intents"), body: createWith("method"), strict: numeric, want: [3]answer{bad, badMeth, badMeth}},
		{name: "debit reference", method: "POST", scope: "storefront", path: fixed("/v1/accounts/cust-h/debits"), body: debitWith("reference"), strict: pathish, want: all(bad)},
		{name: "debit amount_usd", method: "POST", scope: "storefront", path: fixed("/v1/accounts/cust-h/debits"), body: debitWith("amount_usd"), strict: numeric, accepts: []string{"fraction"}, want: [3]answer{bad, badAmt, badAmt}},
		{name: "resolve action", method: "POST", scope: "finance", path: fixed("/v1/transfers/" + missingTr + "/resolve"), body: resolveWith("ignore", "action"), strict: numeric, want: all(bad)},
		{name: "resolve note", method: "POST", scope: "finance", path: fixed("/v1/transfers/" + missingTr + "/resolve"), body: resolveWith("ignore", "note"), strict: broken, accepts: []string{"newline", "tab padded"}, want: all(bad)},
		{name: "resolve intent_id", method: "POST", scope: "finance", path: fixed("/v1/transfers/" + missingTr + "/resolve"), body: resolveWith("credit_intent", "intent_id"), strict: numeric, want: [3]answer{bad, notFound, notFound}},
		{name: "resolve account", method: "POST", scope: "finance", path: fixed("/v1/transfers/" + missingTr + "/resolve"), body: resolveWith("credit_account", "account"), strict: pathish, want: all(bad)},
		{name: "resolve refund_txid", method: "POST", scope: "finance", path: fixed("/v1/transfers/" + missingTr + "/resolve"), body: resolveWith("refunded", "refund_txid"), strict: broken, accepts: []string{"tab padded"}, want: all(bad)}, // trimmed like a pasted txid; its shape check needs the transfer
		{name: "resolve usd_per_unit", method: "POST", scope: "finance", path: fixed("/v1/transfers/" + missingTr + "/resolve"), body: resolveWith("credit_account", "usd_per_unit"), strict: numeric, accepts: []string{"fraction", "past int64"}, want: [3]answer{bad, badAmt, badAmt}},
		{name: "rescan from_height", method: "POST", scope: "operator", path: fixed("/v1/networks/bitcoin/rescan"), body: func(tok string) []byte { return object("from_height", tok) }, strict: numeric, want: all(bad), jsonNumber: true},
	}
	for _, s := range slots {
		t.Run(s.name, func(t *testing.T) {
			before := e.Counts()
			for _, h := range hostileValues {
				if h.class > s.strict || slices.Contains(s.accepts, h.name) {
					continue
				}
				if s.header != "" && strings.ContainsFunc(h.text, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
					continue // an HTTP client cannot send it, or the server trims it (tab)
				}
				if (s.body == nil || s.header != "") && h.json != "" && h.json != h.text {
					continue // a JSON-only spelling
				}
				path := s.path(h.text)
				var body []byte
				if s.body != nil {
					tok := h.json
					if tok == "" || (!s.jsonNumber && h.class == numeric) {
						tok = jsonString(h.text)
					}
					body = s.body(tok)
				}
				var headers []string
				if s.header != "" {
					headers = []string{s.header, h.text}
				}
				var b any
				if body != nil {
					b = body
				}
				st, resp := e.Do(s.method, path, s.scope, b, headers...)
				want := s.want[h.class]
				if s.inPath && h.route {
					want = notFound
				}
				if st != want.status || apiCode(resp) != want.code {
					t.Errorf("%s: %d %s, want %d %s: %.200s", h.name, st, apiCode(resp), want.status, want.code, resp)
				}
				if st >= 500 {
					t.Errorf("%s: %d", h.name, st)
				}
			}
			if after := e.Counts(); !maps.Equal(before, after) {
				t.Fatalf("database changed: before %v after %v", before, after)
			}
		})
	}
}
