package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// hostPattern is a return host: a DNS name or IPv4 address (optionally
// "*." for any subdomain), or a bracketed IPv6 address, with an optional
// port; lower case.
var hostPattern = regexp.MustCompile(`^((\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(:[0-9]{1,5})?$`)

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// Checkout configures the hosted payment page (/pay/{token} on the API
// listener): one page per intent that a storefront sends its customer to.
type Checkout struct {
	// Enabled serves the page and adds payment_page_url to intents. Off by
	// default; it needs PublicBaseURL and the secret named by SecretEnv.
	Enabled bool `yaml:"enabled"`
	// PublicBaseURL is where customers reach this listener (an http(s) URL
	// without query or fragment, e.g. https://pay.example.com); page URLs are
	// PublicBaseURL + /pay/{token}.
	PublicBaseURL string `yaml:"public_base_url"`
	// SecretEnv names the environment variable holding the secret (at least
	// 32 characters) from which page tokens are derived. Every instance
	// behind one PublicBaseURL needs the same secret; a new secret ends every
	// page link issued before.
	SecretEnv string `yaml:"secret_env"`
	// StorefrontName is the shop's name as the page shows it.
	StorefrontName string `yaml:"storefront_name"`
	// ReturnHosts are the hosts a return_url may point to: an exact host
	// ("shop.example.com", "localhost:3000") or a subdomain wildcard
	// ("*.example.com"). Empty: no return_url is accepted.
	ReturnHosts []string `yaml:"return_hosts"`
	// RenewURL is where an expired page sends the customer to try again, with
	// {kind} and {reference} replaced (URL-escaped); empty: the page says to
	// contact the shop.
	RenewURL string `yaml:"renew_url"`
	// ContactURL is how the customer reaches the shop (https: or mailto:),
	// shown where the page says to contact it; empty: no link.
	ContactURL string `yaml:"contact_url"`
	// FrameAncestors are the origins allowed to embed the page in a frame
	// (Content-Security-Policy frame-ancestors, e.g. https://shop.example.com).
	// Empty: no framing (frame-ancestors 'none', X-Frame-Options DENY).
	FrameAncestors []string `yaml:"frame_ancestors"`
	// LinkLifetime is how long after its intent's deadline a page link keeps
	// working; afterwards it is a plain 404.
	LinkLifetime Duration `yaml:"link_lifetime"`
	// RequestsPerMinute is how many page, live and report requests one client
	// address may make per minute (bursts up to a third of it); beyond, 429.
	RequestsPerMinute int `yaml:"requests_per_minute"`
	// MaxLive caps the live connections (server-sent events) open at once on
	// this instance; MaxLivePerClient those of one client address.
	MaxLive          int `yaml:"max_live"`
	MaxLivePerClient int `yaml:"max_live_per_client"`
	// MaxLivePerPage bounds the live connections of one payment page (one
	// link), whoever opens them: a customer has a tab or two open.
	MaxLivePerPage int `yaml:"max_live_per_page"`
	// ProgressInterval is how often open pages waiting for confirmations
	// re-check their intent and their network's height (one query for all
	// of them): confirmation counts and a further partial payment are not
	// events. Status changes reach pages at once, on the event feed's NOTIFY.
	ProgressInterval Duration `yaml:"progress_interval"`
	// TrustedProxies are the addresses (CIDRs) of reverse proxies in front
	// of this listener: for a request from one of them, the client address is
	// the last X-Forwarded-For entry that is not a trusted proxy.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// proxies are TrustedProxies parsed (Proxies).
	proxies []netip.Prefix
}

func (c *Config) validateCheckout() error {
	k := c.Checkout
	if k.Enabled && k.PublicBaseURL == "" {
		return invalid("checkout.public_base_url", "must be set when checkout.enabled: the URL customers reach this listener at, like https://pay.example.com")
	}
	if k.PublicBaseURL != "" {
		u, err := url.Parse(k.PublicBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			return invalid("checkout.public_base_url", "must be an http(s) URL without credentials, query or fragment, like https://pay.example.com")
		}
	}
	if u, err := url.Parse(k.PublicBaseURL); k.Enabled && err == nil && u.Scheme == "http" && !LoopbackHost(u.Hostname()) {
		if mainnet := c.MainnetNetworks(); len(mainnet) > 0 {
			return invalid("checkout.public_base_url", "is plain http on a non-loopback host, and networks.%s is on chain: mainnet: "+
				"a page URL is a capability, and anyone who reads the traffic could open it; serve it over https", mainnet[0])
		}
	}
	if !envName.MatchString(k.SecretEnv) {
		return invalid("checkout.secret_env", "must name the environment variable holding the page secret, like PAYWATCH_CHECKOUT_SECRET")
	}
	if len(k.StorefrontName) > 100 {
		return invalid("checkout.storefront_name", "must be at most 100 characters")
	}
	for i, h := range k.ReturnHosts {
		if !hostPattern.MatchString(h) || len(h) > 260 {
			return invalid(fmt.Sprintf("checkout.return_hosts[%d]", i), "%q is not a lower-case host[:port] or *.domain, like shop.example.com", h)
		}
	}
	if k.RenewURL != "" {
		u, err := url.Parse(strings.NewReplacer("{kind}", "order", "{reference}", "x").Replace(k.RenewURL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return invalid("checkout.renew_url", "must be an http(s) URL; {kind} and {reference} are replaced, like https://shop.example.com/orders/{reference}/pay")
		}
	}
	if k.ContactURL != "" {
		u, err := url.Parse(k.ContactURL)
		ok := err == nil && (((u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil) || (u.Scheme == "mailto" && u.Opaque != ""))
		if !ok {
			return invalid("checkout.contact_url", "must be an http(s) URL or a mailto: address")
		}
	}
	for i, o := range k.FrameAncestors {
		if !validOrigin(o) {
			return invalid(fmt.Sprintf("checkout.frame_ancestors[%d]", i), "%q is not an origin like https://shop.example.com (or https://*.example.com)", o)
		}
	}
	if d := k.LinkLifetime.Duration; d < time.Minute || d > 366*24*time.Hour {
		return invalid("checkout.link_lifetime", "must be between 1m and 8784h, got %s", k.LinkLifetime)
	}
	if k.RequestsPerMinute < 10 || k.RequestsPerMinute > 1000000 {
		return invalid("checkout.requests_per_minute", "must be between 10 and 1000000")
	}
	if k.MaxLive < 1 || k.MaxLive > 1000000 {
		return invalid("checkout.max_live", "must be between 1 and 1000000")
	}
	if k.MaxLivePerClient < 1 || k.MaxLivePerClient > k.MaxLive {
		return invalid("checkout.max_live_per_client", "must be between 1 and checkout.max_live (%d)", k.MaxLive)
	}
	if k.MaxLivePerPage < 1 || k.MaxLivePerPage > 1000 {
		return invalid("checkout.max_live_per_page", "must be between 1 and 1000")
	}
	if d := k.ProgressInterval.Duration; d < 100*time.Millisecond || d > time.Minute {
		return invalid("checkout.progress_interval", "must be between 100ms and 1m, got %s", k.ProgressInterval)
	}
	return c.Checkout.resolveProxies()
}

func (k *Checkout) resolveProxies() error {
	k.proxies = nil
	for i, s := range k.TrustedProxies {
		p, err := ParseProxy(s)
		if err != nil {
			return invalid(fmt.Sprintf("checkout.trusted_proxies[%d]", i), "%q is not an IP address or CIDR like 10.0.0.0/8", s)
		}
		k.proxies = append(k.proxies, p)
	}
	return nil
}

// Proxies returns checkout.trusted_proxies as Validate parsed them.
func (k *Checkout) Proxies() []netip.Prefix { return append([]netip.Prefix(nil), k.proxies...) }

// ParseProxy parses a checkout.trusted_proxies entry: a CIDR, or one IP
// address.
func ParseProxy(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// validOrigin reports whether o is a CSP source of a web origin:
// http(s)://host[:port], the host possibly starting with "*.".
func validOrigin(o string) bool {
	rest, ok := strings.CutPrefix(o, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(o, "http://"); !ok {
			return false
		}
	}
	host := rest
	if h, port, err := net.SplitHostPort(rest); err == nil {
		host = h
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return hostPattern.MatchString(host)
}
