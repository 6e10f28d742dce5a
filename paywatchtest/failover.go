package paywatchtest

import (
	"net/url"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
)

// BehindProxy puts the Env's database behind a TCP proxy the test can
// blackhole (a primary that vanishes without closing its sockets), with
// failover settings short enough for a test: *p is the proxy and *direct
// the database's own URL, both set when the Env is built.
func BehindProxy(p **devnet.Proxy, direct *string) Option {
	return func(e *Env) {
		u, err := url.Parse(e.Config.DatabaseURL)
		if err != nil {
			e.T.Fatal(err)
		}
		*direct = e.Config.DatabaseURL
		if *p, err = devnet.NewProxy(u.Host); err != nil {
			e.T.Fatal(err)
		}
		proxy := *p
		e.T.Cleanup(func() { proxy.Close() })
		u.Host = proxy.Addr()
		e.Config.DatabaseURL = u.String()
		e.Config.Database = config.Database{ProbeInterval: config.Duration{Duration: 100 * time.Millisecond},
			ProbeTimeout:   config.Duration{Duration: 300 * time.Millisecond},
			ConnectTimeout: config.Duration{Duration: 500 * time.Millisecond},
			RetryFor:       config.Duration{Duration: time.Second}}
	}
}
