package webhooks

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// redacted replaces what RedactURL hides.
const redacted = "REDACTED"

// RedactURL returns an endpoint URL fit to show: user info becomes
// REDACTED@, every query value REDACTED (the names stay, sorted), the
// fragment goes. Scheme, host and path stay, so endpoints remain told
// apart. An unparseable URL is "(unparseable URL)".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "(unparseable URL)"
	}
	if u.User != nil {
		u.User = url.User(redacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		names := make([]string, 0, len(q))
		for k := range q {
			names = append(names, url.QueryEscape(k)+"="+redacted)
		}
		sort.Strings(names)
		u.RawQuery = strings.Join(names, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// urlInText finds a URL inside an error message (net/http quotes it).
var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// RedactText returns s with every URL in it redacted by RedactURL: a
// delivery error names the endpoint without its credentials.
func RedactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlInText.ReplaceAllStringFunc(s, func(m string) string {
		trimmed := strings.TrimRight(m, ":;,.)")
		return RedactURL(trimmed) + m[len(trimmed):]
	})
}

// redactError carries an error whose message went through RedactText;
// errors.Is and errors.As still see the cause.
type redactError struct {
	msg string
	err error
}

func newRedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := RedactText(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactError{msg: msg, err: err}
}

func (e *redactError) Error() string { return e.msg }
func (e *redactError) Unwrap() error { return e.err }
