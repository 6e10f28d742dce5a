package config

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"

	"github.com/paywatch/paywatch/payment"
)

// Endpoint is one node endpoint of a network (networks.<n>.endpoints): a
// node of one's own or a rented provider. Its URL and the environment
// variables named here hold secrets; only Name may be shown (status,
// metrics labels, logs).
type Endpoint struct {
	// Name names the endpoint in the status, metrics and logs
	// ([a-z0-9_-], at most 32 characters, unique in the network).
	Name string `yaml:"name"`
	// URL is the endpoint's http(s) URL; user:password in it is sent as
	// basic auth, never shown.
	URL string `yaml:"url"`
	// Role is scan (the scanner reads blocks from it), verify (a second
	// source only) or both (the default).
	Role EndpointRole `yaml:"role"`
	// Priority orders the endpoints: the lowest is preferred while it
	// serves; equal priorities are ranked by recent success and latency.
	Priority int `yaml:"priority"`
	// APIKeyEnv names the environment variable holding the provider's API
	// key, sent in the network's key header (Tron: TRON-PRO-API-KEY).
	APIKeyEnv string `yaml:"api_key_env"`
	// HeadersEnv names the environment variable holding request headers,
	// "Name: value" separated by newlines or ";" (Authorization for basic
	// or bearer auth, a provider's key header).
	HeadersEnv string `yaml:"headers_env"`
	// MaxRequestsPerSecond paces requests to the endpoint (a token bucket;
	// 0: unpaced).
	MaxRequestsPerSecond float64 `yaml:"max_requests_per_second"`
	// Burst is the bucket's size (default: max_requests_per_second rounded
	// up, at least 1).
	Burst int `yaml:"burst"`
	// DailyBudget is the requests the endpoint may take per UTC day (0:
	// no budget); spent, the endpoint is not used until the next day.
	DailyBudget int64 `yaml:"daily_budget"`
}

// EndpointRole is what an endpoint is used for.
type EndpointRole string

// The endpoint roles.
const (
	RoleScan   EndpointRole = "scan"
	RoleVerify EndpointRole = "verify"
	RoleBoth   EndpointRole = "both"
)

// Scans reports whether the scanner may read from an endpoint of role r.
func (r EndpointRole) Scans() bool { return r == RoleScan || r == RoleBoth }

// APIKeyHeader is the header a network's api_key_env is sent in ("" when
// the network's providers take no key header: put it in headers_env).
func APIKeyHeader(n payment.Network) string {
	if n == payment.Tron {
		return "TRON-PRO-API-KEY"
	}
	return ""
}

// endpointName is what an endpoint name may be: safe as a metric label
// and in a log line.
var endpointName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// headerName is an HTTP header name (an RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// DefaultEndpointName names the one endpoint of the rpc_url form.
const DefaultEndpointName = "primary"

// Endpoints returns the network's endpoints as Validate resolved them:
// the endpoints list, or the one endpoint of rpc_url (named "primary",
// role both, unpaced, with api_key_env).
func (n *Network) Endpoints() []Endpoint { return n.endpoints }

// validateEndpoints checks networks.<name>.endpoints and resolves the
// network's endpoint list.
func (n *Network) validateEndpoints(name payment.Network) error {
	f := "networks." + string(name)
	n.endpoints = nil
	if len(n.EndpointList) == 0 {
		if n.RPCURL != "" {
			n.endpoints = []Endpoint{{Name: DefaultEndpointName, URL: n.RPCURL, Role: RoleBoth, APIKeyEnv: n.APIKeyEnv}}
		}
		return nil
	}
	if n.RPCURL != "" {
		return invalid(f+".endpoints", "set rpc_url (or PAYWATCH_%s_RPC_URL) or endpoints, not both", strings.ToUpper(string(name)))
	}
	if n.APIKeyEnv != "" {
		return invalid(f+".api_key_env", "with endpoints, set api_key_env on each endpoint")
	}
	if n.CookieFile != "" {
		return invalid(f+".cookie_file", "with endpoints, put user:password in each endpoint's url or an Authorization header in its headers_env")
	}
	if len(n.EndpointList) > 16 {
		return invalid(f+".endpoints", "at most 16 endpoints")
	}
	seen := map[string]bool{}
	scans := false
	for i := range n.EndpointList {
		e := n.EndpointList[i]
		ef := fmt.Sprintf("%s.endpoints[%d]", f, i)
		if !endpointName.MatchString(e.Name) {
			return invalid(ef+".name", "must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit")
		}
		ef = f + ".endpoints." + e.Name
		if seen[e.Name] {
			return invalid(ef+".name", "is used twice")
		}
		seen[e.Name] = true
		if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// Never the value: it may hold a key.
			return invalid(ef+".url", "must be an http(s) URL of the node")
		}
		switch e.Role {
		case "":
			e.Role = RoleBoth
		case RoleScan, RoleVerify, RoleBoth:
		default:
			return invalid(ef+".role", "must be scan, verify or both")
		}
		scans = scans || e.Role.Scans()
		if e.Priority < 0 || e.Priority > 1000 {
			return invalid(ef+".priority", "must be between 0 and 1000")
		}
		if e.APIKeyEnv != "" && APIKeyHeader(name) == "" {
			return invalid(ef+".api_key_env", "%s providers take no key header: put the key in the url or an header of headers_env", name)
		}
		if e.APIKeyEnv != "" && e.HeadersEnv != "" {
			return invalid(ef+".api_key_env", "set api_key_env or headers_env, not both")
		}
		if math.IsNaN(e.MaxRequestsPerSecond) || e.MaxRequestsPerSecond < 0 || e.MaxRequestsPerSecond > 100000 {
			return invalid(ef+".max_requests_per_second", "must be between 0 (unpaced) and 100000")
		}
		if e.Burst < 0 || e.Burst > 100000 {
			return invalid(ef+".burst", "must be between 0 (the default) and 100000")
		}
		if e.Burst == 0 {
			e.Burst = max(1, int(math.Ceil(e.MaxRequestsPerSecond)))
		}
		if e.DailyBudget < 0 {
			return invalid(ef+".daily_budget", "must not be negative (0: no budget)")
		}
		if e.DailyBudget > 0 && e.MaxRequestsPerSecond == 0 {
			return invalid(ef+".max_requests_per_second", "must be set with daily_budget, so the budget is spread over the day")
		}
		if (name == payment.Bitcoin || name == payment.Litecoin) && e.HeadersEnv == "" {
			if u, _ := url.Parse(e.URL); u.User == nil {
				return invalid(ef+".url", "a Bitcoin or Litecoin node needs user:password in the url or an Authorization header in headers_env")
			}
		}
		n.endpoints = append(n.endpoints, e)
	}
	if !scans {
		return invalid(f+".endpoints", "needs at least one endpoint of role scan or both")
	}
	return nil
}

// checkEndpointEnv refuses an endpoint whose api_key_env or headers_env
// names an unset variable or headers that do not parse; the error names
// the key and the variable, never its value.
func (c *Config) checkEndpointEnv(getenv func(string) string) error {
	for _, name := range payment.Networks {
		n := c.Networks[name]
		if n == nil || !n.Enabled {
			continue
		}
		for _, e := range n.EndpointList {
			ef := "networks." + string(name) + ".endpoints." + e.Name
			if e.APIKeyEnv != "" && getenv(e.APIKeyEnv) == "" {
				return invalid(ef+".api_key_env", "the variable %s is not set", e.APIKeyEnv)
			}
			if e.HeadersEnv == "" {
				continue
			}
			v := getenv(e.HeadersEnv)
			if v == "" {
				return invalid(ef+".headers_env", "the variable %s is not set", e.HeadersEnv)
			}
			if _, err := ParseHeaders(v); err != nil {
				return invalid(ef+".headers_env", "the variable %s: %v", e.HeadersEnv, err)
			}
		}
	}
	return nil
}

// ParseHeaders parses a headers_env value: "Name: value" pairs separated
// by newlines or ";". An error never quotes a value.
func ParseHeaders(v string) ([][2]string, error) {
	var out [][2]string
	for i, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == ';' }) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, val, ok := strings.Cut(line, ":")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || !headerName.MatchString(k) || val == "" {
			return nil, fmt.Errorf("header %d: want Name: value", i+1)
		}
		if strings.ContainsAny(val, "\r\n\x00") {
			return nil, fmt.Errorf("header %s: control character in the value", k)
		}
		out = append(out, [2]string{k, val})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no header in it")
	}
	return out, nil
}
