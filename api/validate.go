package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Edge validation: every path parameter, query parameter, header and JSON
// field a request carries is checked here before any of it reaches the
// service or the database. Text must be valid UTF-8 without control
// characters and within a length bound; ids must have the shape the API
// issues (pi_ and tr_ followed by a ULID); names, enums and numbers have
// their own shapes. A refused value answers 400 invalid_request (404
// not_found for an id in the path) with a message naming the field.

// maxText bounds any query parameter, header or JSON string without a bound
// of its own.
const maxText = 200

// edgeError is a refused request value: the status and code to answer.
type edgeError struct {
	status int
	code   string
	msg    string
}

func (e *edgeError) Error() string { return e.msg }

func badRequest(format string, args ...any) *edgeError {
	return &edgeError{http.StatusBadRequest, "invalid_request", fmt.Sprintf(format, args...)}
}

// writeEdge writes err: an *edgeError with its status and code, anything
// else as 400 invalid_request.
func writeEdge(w http.ResponseWriter, err error) {
	var e *edgeError
	if errors.As(err, &e) {
		writeError(w, e.status, e.code, e.msg)
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
}

// quoted renders a refused value for a message: quoted, escaped, and cut
// short so a 100 kB value is not echoed back.
func quoted(v string) string {
	if len(v) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return strconv.Quote(v[:cut]) + "…"
	}
	return strconv.Quote(v)
}

// checkText checks that v is valid UTF-8 of at most max bytes with no
// control character (newline and tab allowed when multiline) and no U+FFFD,
// which is what a decoder leaves of broken text. field names v in the error.
func checkText(field, v string, max int, multiline bool) error {
	if len(v) > max {
		return badRequest("%s must be at most %d bytes", field, max)
	}
	if !utf8.ValidString(v) {
		return badRequest("%s must be valid UTF-8", field)
	}
	for _, r := range v {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return badRequest("%s must not contain control characters (found %U)", field, r)
		}
	}
	return nil
}

// validID reports whether v is prefix_ followed by a ULID, the shape of
// every id store.NewID issues.
func validID(prefix, v string) bool {
	rest, ok := strings.CutPrefix(v, prefix+"_")
	if !ok || len(rest) != ulid.EncodedSize {
		return false
	}
	_, err := ulid.ParseStrict(rest)
	return err == nil && strings.ToUpper(rest) == rest
}

// idPrefixes names the id shape of an {id} path parameter by the collection
// it follows ("/v1/intents/{id}").
var idPrefixes = map[string]struct{ prefix, noun string }{
	"intents":   {"pi", "intent"},
	"transfers": {"tr", "transfer"},
}

// checkPathParam checks one path parameter by its name in the pattern.
// collection is the path segment before it.
func checkPathParam(name, collection, v string) error {
	switch name {
	case "id":
		if p, ok := idPrefixes[collection]; ok {
			if !validID(p.prefix, v) {
				return &edgeError{http.StatusNotFound, "not_found", fmt.Sprintf("no %s %s: id must look like %s_01J…", p.noun, quoted(v), p.prefix)}
			}
			return nil
		}
	case "account", "reference":
		if !intents.ValidName(v) {
			return badRequest("%s must be 1-200 characters of letters, digits and ._:/#-", name)
		}
		return nil
	case "kind":
		if !payment.PayableKind(v).Valid() {
			return badRequest("kind must be order or topup")
		}
		return nil
	case "network":
		if !payment.Network(v).Valid() {
			return &edgeError{http.StatusNotFound, "not_found", fmt.Sprintf("unknown network %s", quoted(v))}
		}
		return nil
	}
	return checkText(name, v, maxText, false)
}

// pathParams lists a pattern's wildcards with the segment before each:
// "GET /v1/intents/{id}/qr.png" gives {id, intents}.
func pathParams(pattern string) [][2]string {
	_, path, ok := strings.Cut(pattern, " ")
	if !ok {
		path = pattern
	}
	var out [][2]string
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			name := strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
			name = strings.TrimSuffix(name, "...")
			prev := ""
			if i > 0 {
				prev = segs[i-1]
			}
			out = append(out, [2]string{name, prev})
		}
	}
	return out
}

// checkRequest checks the path parameters (params, from pathParams) and
// every query parameter of r before a handler runs.
func checkRequest(params [][2]string, r *http.Request) error {
	for _, p := range params {
		if err := checkPathParam(p[0], p[1], r.PathValue(p[0])); err != nil {
			return err
		}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return badRequest("the query string is malformed: %s", strings.TrimPrefix(err.Error(), "invalid URL escape "))
	}
	for k, vs := range q {
		if err := checkText("query parameter name", k, maxText, false); err != nil {
			return err
		}
		if len(vs) > 1 {
			return badRequest("query parameter %s is given %d times", quoted(k), len(vs))
		}
		if err := checkText(k, vs[0], maxText, false); err != nil {
			return err
		}
	}
	return nil
}

// validated wraps h so it runs only for a request whose path and query
// parameters pass checkRequest.
func validated(pattern string, h func(http.ResponseWriter, *http.Request, store.APIKey)) func(http.ResponseWriter, *http.Request, store.APIKey) {
	params := pathParams(pattern)
	return func(w http.ResponseWriter, r *http.Request, key store.APIKey) {
		if err := checkRequest(params, r); err != nil {
			writeEdge(w, err)
			return
		}
		h(w, r, key)
	}
}

// queryID reads an optional id-valued query parameter (a cursor such as
// ?after=le_…); a value of another shape is refused.
func queryID(r *http.Request, name, prefix string) (string, error) {
	v := r.URL.Query().Get(name)
	if v != "" && !validID(prefix, v) {
		return "", badRequest("%s must be an id like %s_01J…, not %s", name, prefix, quoted(v))
	}
	return v, nil
}

// parseCount parses a base-10 integer written plainly: digits only, no
// sign, no leading zero, within int64. ok is false for anything else.
func parseCount(v string) (int64, bool) {
	if v == "" || len(v) > 19 || (len(v) > 1 && v[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// bodyField is how one JSON string field is checked beyond checkText.
type bodyField struct {
	max       int
	multiline bool
	idPrefix  string // the field is an id of this shape
	noun      string // what the id names
	decimal   bool   // the field is a plain non-negative decimal
	// trimmed: the service trims surrounding white space (a pasted txid
	// with its line break), so only the inside is checked.
	trimmed bool
}

// bodyFields are the JSON fields with rules of their own; any other string
// gets maxText and no control characters.
var bodyFields = map[string]bodyField{
	"note":         {max: 2000, multiline: true},
	"intent_id":    {max: maxText, idPrefix: "pi", noun: "intent"},
	"amount_usd":   {max: 100, decimal: true},
	"usd_per_unit": {max: 100, decimal: true},
	"refund_txid":  {max: maxText, trimmed: true},
	"reason":       {max: 2000, multiline: true},
}

// plainDecimal reports whether v is digits with an optional fraction.
func plainDecimal(v string) bool {
	whole, frac, dot := strings.Cut(v, ".")
	if whole == "" || (dot && frac == "") {
		return false
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// checkBody checks a JSON request body before it is decoded into a type:
// valid UTF-8, every string within its field's rules and every number a
// plain integer within int64 (no API field is a fraction, and "-0", "1e3"
// or a 20-digit number is never a height or an index).
func checkBody(body []byte) error {
	if !utf8.Valid(body) {
		return badRequest("request body must be valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []bool // per open container: true for an object
	field, expectKey := "", false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // the strict decoder names the syntax error
		}
		isKey := expectKey
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, true)
			case '[':
				stack = append(stack, false)
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if isKey {
				if err := checkText("field name", v, maxText, false); err != nil {
					return err
				}
				field = v
				break
			}
			if err := checkBodyString(field, v); err != nil {
				return err
			}
		case json.Number:
			s := v.String()
			neg := strings.HasPrefix(s, "-")
			n, ok := parseCount(strings.TrimPrefix(s, "-"))
			if !ok || (neg && n == 0) {
				return badRequest("%s must be an integer written plainly (no sign on zero, fraction or exponent) within ±9223372036854775807, not %s", field, quoted(s))
			}
		}
		// The next token is a key when we are directly inside an object and
		// did not just read one.
		expectKey = len(stack) > 0 && stack[len(stack)-1] && !isKey
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			expectKey = len(stack) > 0 && stack[len(stack)-1]
		}
	}
}

// ruleFor returns the rule of a JSON field. encoding/json matches keys to
// fields without regard to case ("Amount_usd" fills amount_usd), so the
// rules are found the same way: a key spelled otherwise gets its field's
// rule, not the default.
func ruleFor(field string) bodyField {
	if rule, ok := bodyFields[field]; ok {
		return rule
	}
	for name, rule := range bodyFields {
		if strings.EqualFold(name, field) {
			return rule
		}
	}
	return bodyField{max: maxText}
}

func checkBodyString(field, v string) error {
	rule := ruleFor(field)
	if rule.trimmed {
		v = strings.TrimSpace(v)
	}
	if err := checkText(field, v, rule.max, rule.multiline); err != nil {
		return err
	}
	switch {
	case rule.idPrefix != "" && v != "" && !validID(rule.idPrefix, v):
		// No such object can exist: the same answer as an unknown id.
		return &edgeError{http.StatusNotFound, "not_found", fmt.Sprintf("no %s %s: %s must look like %s_01J…", rule.noun, quoted(v), field, rule.idPrefix)}
	case rule.decimal && v != "" && !plainDecimal(v):
		return &edgeError{http.StatusBadRequest, "invalid_amount", fmt.Sprintf("%s must be a plain decimal string like \"249.00\", not %s", field, quoted(v))}
	}
	return nil
}
