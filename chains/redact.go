package chains

import (
	"net/url"
	"regexp"
	"strings"
)

// NodeHost returns the host[:port] of a node URL, without its scheme,
// credentials, path or query: what an operator may see of a node. A URL
// that does not parse is "node".
func NodeHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "node"
	}
	return u.Host
}

// urlPattern finds a URL in an error message, with the HTTP method and
// quotes net/http's *url.Error puts around it ("Post \"https://…\": …").
var urlPattern = regexp.MustCompile(`(?:(?:GET|POST|Get|Post|Head|Put|Delete|Patch|Options) )?"?[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+"?`)

// dialNoise is net's "dial tcp HOST: connect: " before the cause, redundant
// once the message starts with the node's host.
var dialNoise = regexp.MustCompile(`dial (?:tcp|tcp4|tcp6|udp) [^\s]+: (?:connect: )?`)

// RedactText reduces every URL in s to "node HOST", so that no credential,
// API key in a path (/v3/<key>) or query string (?api-key=) reaches an API
// answer or a log line: `Post "http://u:p@127.0.0.1:8545/v3/k": dial tcp
// 127.0.0.1:8545: connect: connection refused` becomes `node
// 127.0.0.1:8545: connection refused`.
func RedactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	out := urlPattern.ReplaceAllStringFunc(s, func(m string) string {
		if i := strings.IndexByte(m, ' '); i >= 0 && !strings.Contains(m[:i], "://") {
			m = m[i+1:]
		}
		m = strings.Trim(m, `"`)
		trimmed := strings.TrimRight(m, ":;,.)")
		return "node " + NodeHost(trimmed) + m[len(trimmed):]
	})
	if out != s {
		out = dialNoise.ReplaceAllString(out, "")
	}
	return out
}

// RedactError returns err with its message redacted by RedactText (nil for
// nil). errors.Is and errors.As still see err and its causes.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := RedactText(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

// redactedError carries a node error whose message has no URL.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
