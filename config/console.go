package config

import (
	"net/url"
	"strings"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// Console configures the browser console (/console/ on the API listener).
type Console struct {
	// Enabled serves the console; on by default.
	Enabled bool `yaml:"enabled"`
	// SessionTTL is how long a sign-in lasts.
	SessionTTL Duration `yaml:"session_ttl"`
	// SecureCookies marks the session cookie Secure (and names it with the
	// __Host- prefix) whatever the request. Unset (the default): Secure
	// unless the console listens on loopback. A request over TLS, or one a
	// trusted proxy says came over https, always gets a Secure cookie.
	SecureCookies *bool `yaml:"secure_cookies"`
	// IdleTimeout ends a session unused this long (the pages' live refresh
	// is not use), besides session_ttl.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// SignInAttempts is how many failed sign-ins one client address may make
	// per minute before it is refused for a minute.
	SignInAttempts int `yaml:"signin_attempts"`
	// SignInLinks serves GET /console/signin/link, which exchanges a
	// one-time token written into the database (console.NewSignInLink) for
	// a session. Off by default; the local sandbox turns it on to print a
	// ready sign-in link. Only someone who can write the database can make
	// such a token.
	SignInLinks bool `yaml:"signin_links"`
	// Explorers maps a network to a block explorer URL template for a
	// transaction; {txid} is replaced. None by default.
	Explorers map[string]string `yaml:"explorers"`
}

func (c *Config) validateConsole() error {
	cc := c.Console
	if cc.SessionTTL.Duration < time.Minute || cc.SessionTTL.Duration > 30*24*time.Hour {
		return invalid("console.session_ttl", "must be between 1m and 720h, got %s", cc.SessionTTL)
	}
	if cc.IdleTimeout.Duration < time.Minute || cc.IdleTimeout.Duration > cc.SessionTTL.Duration {
		return invalid("console.idle_timeout", "must be between 1m and session_ttl (%s), got %s", cc.SessionTTL, cc.IdleTimeout)
	}
	if cc.SignInAttempts < 1 || cc.SignInAttempts > 1000 {
		return invalid("console.signin_attempts", "must be between 1 and 1000")
	}
	for n, tmpl := range cc.Explorers {
		if !payment.Network(n).Valid() {
			return invalid("console.explorers."+n, "unknown network (known: bitcoin, litecoin, ethereum, tron, solana)")
		}
		u, err := url.Parse(strings.ReplaceAll(tmpl, "{txid}", "x"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.Contains(tmpl, "{txid}") {
			return invalid("console.explorers."+n, "must be an http(s) URL containing {txid}, like https://mempool.space/tx/{txid}")
		}
	}
	return nil
}

// ConsoleListen is the address the console is served on: the admin
// listener (AdminAddr) when there is one, else listen.
func (c *Config) ConsoleListen() string {
	if a := c.AdminAddr(); a != "" {
		return a
	}
	return c.Listen
}

// ConsoleSecureCookies reports whether every console cookie is Secure:
// console.secure_cookies when set, else whether the console listens
// beyond loopback.
func (c *Config) ConsoleSecureCookies() bool {
	if sc := c.Console.SecureCookies; sc != nil {
		return *sc
	}
	return !LoopbackAddr(c.ConsoleListen())
}
