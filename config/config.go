package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
)

// ErrInvalid wraps every validation error; the message names the field.
var ErrInvalid = errors.New("invalid config")

// Config is the whole configuration of one paywatch instance.
type Config struct {
	// Listen is the HTTP listen address of the API.
	Listen string `yaml:"listen"`
	// AdminListen is a second listener serving /metrics and the console,
	// and only them ("" = none: both are served on Listen). Keep it on
	// loopback or a private interface.
	AdminListen string `yaml:"admin_listen"`
	// TrustedProxies are the proxies (IPs or CIDRs) whose X-Forwarded-For
	// and X-Forwarded-Proto headers are believed; from any other peer they
	// are ignored.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// DatabaseURL is the PostgreSQL URL; PAYWATCH_DATABASE_URL overrides it.
	DatabaseURL string `yaml:"database_url"`
	// Instance names this instance in the status endpoint (leader); default
	// hostname and pid.
	Instance string `yaml:"instance"`
	// Deadline is how long an intent accepts payment.
	Deadline Duration `yaml:"deadline"`
	// TopupAmounts are the only USD amounts a top-up may have.
	TopupAmounts []string `yaml:"topup_amounts"`
	// MaxBodyBytes caps API request bodies.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ExpirySweep is how often deadlines are enforced (robfig/cron spec).
	ExpirySweep string `yaml:"expiry_sweep"`
	// sweep is ExpirySweep parsed (SweepSchedule).
	sweep cron.Schedule
	// topups are TopupAmounts parsed (Topups).
	topups []payment.Cents
	// Methods configures each payment method by name (BTC, USDT-TRC20, …).
	Methods map[payment.Method]*Method `yaml:"methods"`
	// Networks configures each network's node and addresses.
	Networks map[payment.Network]*Network `yaml:"networks"`
	// Rates configures the rate sources.
	Rates Rates `yaml:"rates"`
	// Webhooks are the endpoints events are delivered to.
	Webhooks []Webhook `yaml:"webhooks"`
	// Events configures the long-polls of the event feed.
	Events Events `yaml:"events"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// Console configures the browser console served at /console/.
	Console Console `yaml:"console"`
	// Checkout configures the hosted payment page served at /pay/.
	Checkout Checkout `yaml:"checkout"`
	// Database tunes the PostgreSQL client across a failover.
	Database Database `yaml:"database"`
	// Reconcile configures the reconciler (package reconcile).
	Reconcile Reconcile `yaml:"reconcile"`
	// Finance bounds finance's decisions (security.go).
	Finance Finance `yaml:"finance"`
	// Limits bound each API key's creations (security.go).
	Limits Limits `yaml:"limits"`
}

// Database tunes how paywatch behaves when its PostgreSQL server goes away
// (README, Operations: PostgreSQL failover). Zero values take the defaults
// in brackets; connect_timeout and statement_timeout in database_url win.
type Database struct {
	// ConnectTimeout bounds each host's connection attempt [5s].
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// StatementTimeout is the server's statement_timeout [30s].
	StatementTimeout Duration `yaml:"statement_timeout"`
	// Keepalive is the TCP keepalive idle time and interval [5s].
	Keepalive Duration `yaml:"keepalive"`
	// ProbeInterval and ProbeTimeout: how often the server is checked and
	// how long a check may take before it is declared lost and every
	// connection closed [1s, 3s].
	ProbeInterval Duration `yaml:"probe_interval"`
	ProbeTimeout  Duration `yaml:"probe_timeout"`
	// RetryFor is how long a write waits for a new primary before the API
	// answers 503 database_unavailable [15s].
	RetryFor Duration `yaml:"retry_for"`
}

// Reconcile configures the reconciler: on a schedule and on demand it
// compares the node's own view of our addresses over scanned block ranges
// with what paywatch recorded (package reconcile, README "The reconciler").
// Zero values take the package's defaults.
type Reconcile struct {
	// Schedule is a robfig/cron schedule; default "@hourly".
	Schedule string `yaml:"schedule"`
	// schedule is Schedule parsed; nil when unset (CronSchedule).
	schedule cron.Schedule
	// Blocks is the fewest blocks below the cursor a run checks again
	// (default 100); MaxBlocks caps a run (default 2000).
	Blocks    int64 `yaml:"blocks"`
	MaxBlocks int64 `yaml:"max_blocks"`
	// SampleAddresses is how many addresses a Solana run lists, on top of
	// those that received something in the range (default 50).
	SampleAddresses int `yaml:"sample_addresses"`
	// RatePerSecond is each node's call budget for the reconciler, on top
	// of the scanner's (default 10).
	RatePerSecond float64 `yaml:"rate_per_second"`
}

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
	// ProgressInterval is how often open pages waiting for confirmations
	// re-check their intent and their network's height (one query for all
	// of them): confirmation counts and a further partial payment are not
	// events. Status changes reach pages at once, on the event feed's NOTIFY.
	ProgressInterval Duration `yaml:"progress_interval"`
	// TrustedProxies are the addresses (CIDRs) of reverse proxies in front
	// of this listener: for a request from one of them, the client address is
	// the last X-Forwarded-For entry that is not a trusted proxy.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

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

// Method configures one payment method.
type Method struct {
	// Enabled switches the method on.
	Enabled bool `yaml:"enabled"`
	// Confirmations required before a transfer counts as confirmed; 0 means
	// the network's finality (Tron solidified, Solana and Ethereum finalized).
	Confirmations *int `yaml:"confirmations"`
	// LargeAmountUSD: intents at or above this USD amount need
	// LargeConfirmations instead ("" = off).
	LargeAmountUSD string `yaml:"large_amount_usd"`
	// LargeConfirmations for large intents (0 = finality).
	LargeConfirmations *int `yaml:"large_confirmations"`
	// UnderpaymentTolerance in the asset's units ("0.000001"): an intent is
	// paid when the confirmed sum reaches amount minus this.
	UnderpaymentTolerance string `yaml:"underpayment_tolerance"`
	// DisplayDecimals: amounts are rounded up to this many decimals.
	DisplayDecimals *int `yaml:"display_decimals"`
	// DustMin in the asset's units: smaller transfers are dust.
	DustMin string `yaml:"dust_min"`
	// Contract is the token contract (tokens only); default the mainnet one.
	Contract string `yaml:"contract"`

	// Resolved by Validate (and Default): LargeAmountUSD in cents (large
	// false when off), UnderpaymentTolerance and DustMin in base units.
	large     bool
	largeUSD  payment.Cents
	tolerance *big.Int
	dust      *big.Int
}

// Network configures one network.
type Network struct {
	// Enabled runs the network's scanner.
	Enabled bool `yaml:"enabled"`
	// Chain is mainnet, testnet or regtest (address formats).
	Chain string `yaml:"chain"`
	// RPCURL is the node URL, credentials included;
	// PAYWATCH_<NETWORK>_RPC_URL overrides it.
	RPCURL string `yaml:"rpc_url"`
	// NotifyURL is where the node pushes its changes, when that is not
	// where paywatch looks by default: the Ethereum eth_subscribe websocket
	// (ws:// or wss://; default the RPC URL with http made ws), the Solana
	// pubsub websocket (default likewise; a bare agave node serves it on
	// the RPC port + 1), or a Bitcoin Core / Litecoin Core ZMQ publisher
	// (tcp://host:port publishing hashblock and hashtx or rawtx; default
	// none: waitfornewblock and a mempool peek). btcd's websocket is found
	// on the RPC URL; Tron pushes nothing. PAYWATCH_<NETWORK>_NOTIFY_URL
	// overrides it.
	NotifyURL string `yaml:"notify_url"`
	// CookieFile is the node's RPC cookie file (Bitcoin Core, Litecoin
	// Core), used when rpc_url carries no user:password.
	CookieFile string `yaml:"cookie_file"`
	// APIKeyEnv names the environment variable holding a node API key
	// (Tron: TRON-PRO-API-KEY).
	APIKeyEnv string `yaml:"api_key_env"`
	// AccountKey is the account-level extended public key (xpub, zpub, …)
	// addresses are derived from. Never a private key.
	AccountKey string `yaml:"account_key"`
	// Gap is how many addresses beyond the last handed out are watched.
	Gap int `yaml:"gap"`
	// PollInterval between tip checks.
	PollInterval Duration `yaml:"poll_interval"`
	// MaxLagBlocks: new intents are refused when the scanner is further
	// behind the node than this, or the node is unreachable.
	MaxLagBlocks int64 `yaml:"max_lag_blocks"`
	// SafetyDepth: a reorg deeper than this is a critical, sticky failure.
	SafetyDepth int64 `yaml:"safety_depth"`
	// StartHeight is where a fresh scanner starts; default the node's tip.
	StartHeight *int64 `yaml:"start_height"`
	// Parallel blocks fetched at once when catching up.
	Parallel int `yaml:"parallel"`
	// Mode selects Solana scanning: block, address or auto.
	Mode string `yaml:"mode"`
	// Trace selects Ethereum internal-transfer detection: auto, on, off.
	Trace string `yaml:"trace"`
}

// Rates configures the exchange-rate sources.
type Rates struct {
	// Sources are provider names: coinbase, kraken, binance, coingecko, static.
	Sources []string `yaml:"sources"`
	// Refresh is a robfig/cron schedule.
	Refresh string `yaml:"refresh"`
	// MaxAge after which a source's price is stale.
	MaxAge Duration `yaml:"max_age"`
	// MaxDeviation drops a source further than this fraction from the median.
	MaxDeviation string `yaml:"max_deviation"`
	// MinSources fresh, agreeing prices needed for a quote. Default 2: a
	// single-source setup must say min_sources: 1 (and /v1/status shows it).
	MinSources int `yaml:"min_sources"`
	// Static prices (symbol → USD) used only when "static" is a source.
	Static map[string]string `yaml:"static"`
	// BaseURLs overrides a provider's API base URL (e.g. a proxy).
	BaseURLs map[string]string `yaml:"base_urls"`

	// Resolved by Validate (and Default): Refresh and MaxDeviation parsed.
	refresh      cron.Schedule
	maxDeviation *big.Rat
}

// Events configures GET /v1/events?wait= long-polls. One reader per
// instance serves every waiting client; these bound how many wait.
type Events struct {
	// MaxWaiters caps the long-polls waiting at once on this instance; one
	// more gets 429 rate_limited with Retry-After.
	MaxWaiters int `yaml:"max_waiters"`
	// MaxWaitersPerKey caps the long-polls of one API key waiting at once.
	MaxWaitersPerKey int `yaml:"max_waiters_per_key"`
	// PollInterval is how often the reader re-reads while clients wait even
	// without a NOTIFY (a safety net), and the Retry-After of a 429.
	PollInterval Duration `yaml:"poll_interval"`
}

// Webhook is one event receiver.
type Webhook struct {
	// Name identifies the endpoint in the delivery log.
	Name string `yaml:"name"`
	// URL receives a POST per event.
	URL string `yaml:"url"`
	// SecretEnv names the environment variable holding the signing secret.
	SecretEnv string `yaml:"secret_env"`
	// NextSecretEnv names the variable holding the next secret during a
	// rotation ("" when none): every delivery is then signed with both, so
	// the receiver can switch at its own pace; afterwards the next secret
	// moves to secret_env and this is emptied.
	NextSecretEnv string `yaml:"next_secret_env"`
	// Events filters event types; empty means all.
	Events []string `yaml:"events"`
	// AccountPrefix, when set, sends only the events of accounts starting
	// with it (the binding of that storefront's API key).
	AccountPrefix string `yaml:"account_prefix"`
	// Start is where a newly configured endpoint begins: "beginning" (the
	// default: every event ever recorded) or "now" (only new events).
	Start string `yaml:"start"`
}

// Duration is a time.Duration written as "30m" in YAML.
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 30m or 5s", n.Line, s)
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

func intp(v int) *int { return &v }

// Default returns the configuration with every default filled in: all
// methods known but disabled, no networks enabled.
func Default() *Config {
	c := &Config{
		Listen:       "127.0.0.1:8080",
		Deadline:     Duration{30 * time.Minute},
		TopupAmounts: []string{"100.00", "500.00", "2000.00", "10000.00"},
		MaxBodyBytes: 1 << 20,
		ExpirySweep:  "@every 10s",
		Methods:      map[payment.Method]*Method{},
		Networks:     map[payment.Network]*Network{},
		LogLevel:     "info",
		Console: Console{Enabled: true, SessionTTL: Duration{12 * time.Hour}, IdleTimeout: Duration{30 * time.Minute},
			SignInAttempts: 5, Explorers: map[string]string{}},
		Events: Events{MaxWaiters: 2000, MaxWaitersPerKey: 200, PollInterval: Duration{5 * time.Second}},
		Database: Database{ConnectTimeout: Duration{5 * time.Second}, StatementTimeout: Duration{30 * time.Second},
			Keepalive: Duration{5 * time.Second}, ProbeInterval: Duration{time.Second}, ProbeTimeout: Duration{3 * time.Second},
			RetryFor: Duration{15 * time.Second}},
		Checkout: Checkout{SecretEnv: "PAYWATCH_CHECKOUT_SECRET", ReturnHosts: []string{}, FrameAncestors: []string{},
			TrustedProxies: []string{}, LinkLifetime: Duration{30 * 24 * time.Hour}, RequestsPerMinute: 120,
			MaxLive: 5000, MaxLivePerClient: 20, ProgressInterval: Duration{time.Second}},
		Rates: Rates{
			Sources:      []string{"coinbase", "kraken", "coingecko"},
			Refresh:      "@every 30s",
			MaxAge:       Duration{5 * time.Minute},
			MaxDeviation: "0.02",
			MinSources:   2,
		},
		Finance: defaultFinance(),
		Limits:  defaultLimits(),
	}
	for _, m := range payment.Methods {
		c.Methods[m.Method] = defaultMethod(m)
	}
	for _, n := range payment.Networks {
		c.Networks[n] = defaultNetwork(n)
	}
	if err := c.resolve(); err != nil {
		panic("config: the defaults do not resolve: " + err.Error())
	}
	return c
}

func defaultMethod(m payment.MethodInfo) *Method {
	display := m.Decimals
	dust := "0"
	switch m.Method {
	case payment.ETH:
		display = 8
		dust = "0.000001"
	case payment.BTC, payment.LTC:
		dust = "0.00000546"
	case payment.USDTERC20, payment.USDCERC20, payment.USDTTRC20:
		display = 2
		dust = "0.01"
	case payment.TRX:
		display = 2
		dust = "0.1"
	case payment.SOL:
		display = 6
		dust = "0.00001"
	}
	return &Method{
		Confirmations:         intp(m.DefaultConfirmations),
		LargeConfirmations:    nil,
		UnderpaymentTolerance: "0",
		DisplayDecimals:       intp(display),
		DustMin:               dust,
		Contract:              m.MainnetContract,
	}
}

func defaultNetwork(n payment.Network) *Network {
	nw := &Network{Chain: "mainnet", Gap: 20, PollInterval: Duration{5 * time.Second}, Parallel: 4, MaxLagBlocks: 3, SafetyDepth: 100}
	switch n {
	case payment.Bitcoin:
		nw.PollInterval = Duration{10 * time.Second}
		nw.MaxLagBlocks = 2
		nw.Parallel = 8 // catch-up is round-trip bound: fetch 8 raw blocks at once
	case payment.Litecoin:
		nw.MaxLagBlocks = 4
		nw.Parallel = 8
	case payment.Ethereum:
		nw.PollInterval = Duration{4 * time.Second}
		nw.MaxLagBlocks = 10
		nw.SafetyDepth = 64
		nw.Trace = "auto"
	case payment.Tron:
		nw.PollInterval = Duration{3 * time.Second}
		nw.MaxLagBlocks = 20
		nw.SafetyDepth = 19
	case payment.Solana:
		nw.PollInterval = Duration{2 * time.Second}
		nw.MaxLagBlocks = 150
		nw.SafetyDepth = 0
		nw.Mode = "auto"
	}
	return nw
}

// Load reads a YAML file over the defaults, applies environment overrides
// and validates the result.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	return Parse(f, os.Getenv)
}

// Parse reads YAML from r over the defaults, applies environment overrides
// through getenv and validates.
func Parse(r io.Reader, getenv func(string) string) (*Config, error) {
	c := Default()
	body, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	// Methods and networks are merged entry by entry over their defaults;
	// everything else decodes strictly over the defaults.
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%w: the file must be a YAML mapping", ErrInvalid)
		}
		rest := &yaml.Node{Kind: yaml.MappingNode}
		for i := 0; i+1 < len(root.Content); i += 2 {
			key, val := root.Content[i], root.Content[i+1]
			switch key.Value {
			case "methods", "networks":
				if val.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("%w: %s: must be a mapping", ErrInvalid, key.Value)
				}
				for j := 0; j+1 < len(val.Content); j += 2 {
					name, entry := val.Content[j].Value, val.Content[j+1]
					var target any
					if key.Value == "methods" {
						m, ok := c.Methods[payment.Method(name)]
						if !ok {
							return nil, fmt.Errorf("%w: methods.%s: unknown method (known: %s)", ErrInvalid, name, methodNames())
						}
						target = m
					} else {
						n, ok := c.Networks[payment.Network(name)]
						if !ok {
							return nil, fmt.Errorf("%w: networks.%s: unknown network (known: bitcoin, litecoin, ethereum, tron, solana)", ErrInvalid, name)
						}
						target = n
					}
					if err := decodeStrict(entry, target); err != nil {
						return nil, fmt.Errorf("%w: %s.%s: %v", ErrInvalid, key.Value, name, err)
					}
				}
			default:
				rest.Content = append(rest.Content, key, val)
			}
		}
		if err := decodeStrict(rest, c); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	if v := getenv("PAYWATCH_DATABASE_URL"); v != "" {
		c.DatabaseURL = v
	}
	for name, n := range c.Networks {
		if v := getenv("PAYWATCH_" + strings.ToUpper(string(name)) + "_RPC_URL"); v != "" {
			n.RPCURL = v
		}
		if v := getenv("PAYWATCH_" + strings.ToUpper(string(name)) + "_NOTIFY_URL"); v != "" {
			n.NotifyURL = v
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeStrict decodes a node into v rejecting unknown keys.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func methodNames() string {
	var out []string
	for _, m := range payment.Methods {
		out = append(out, string(m.Method))
	}
	return strings.Join(out, ", ")
}

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}

// Validate checks every field and names the first bad one.
func (c *Config) Validate() error {
	if err := checkStrings(reflect.ValueOf(c), ""); err != nil {
		return err
	}
	if c.Listen == "" {
		return invalid("listen", "must not be empty")
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	if err := c.validateReconcile(); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return invalid("listen", "must be host:port, like 127.0.0.1:8080")
	}
	if c.AdminListen != "" {
		if _, _, err := net.SplitHostPort(c.AdminListen); err != nil {
			return invalid("admin_listen", "must be host:port, like 127.0.0.1:9090, or empty")
		}
		if _, port, _ := net.SplitHostPort(c.AdminListen); c.AdminListen == c.Listen && port != "0" {
			return invalid("admin_listen", "must differ from listen")
		}
	}
	for i, p := range c.TrustedProxies {
		if _, err := parseProxy(p); err != nil {
			return invalid(fmt.Sprintf("trusted_proxies[%d]", i), "%q is not an IP address or a CIDR like 10.0.0.0/8", p)
		}
	}
	if c.DatabaseURL == "" {
		return invalid("database_url", "must be set (or PAYWATCH_DATABASE_URL)")
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return invalid("database_url", "must be a postgres:// URL")
	}
	for name, d := range map[string]Duration{"connect_timeout": c.Database.ConnectTimeout, "statement_timeout": c.Database.StatementTimeout,
		"keepalive": c.Database.Keepalive, "probe_interval": c.Database.ProbeInterval, "probe_timeout": c.Database.ProbeTimeout, "retry_for": c.Database.RetryFor} {
		if d.Duration < 0 || d.Duration > time.Hour {
			return invalid("database."+name, "must be between 0 (the default) and 1h, got %s", d)
		}
	}
	if c.Deadline.Duration < time.Minute || c.Deadline.Duration > 7*24*time.Hour {
		return invalid("deadline", "must be between 1m and 168h, got %s", c.Deadline)
	}
	if len(c.TopupAmounts) == 0 {
		return invalid("topup_amounts", "must list at least one amount")
	}
	if err := c.resolveTopups(); err != nil {
		return err
	}
	if err := c.resolveSweep(); err != nil {
		return err
	}
	if c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 64<<20 {
		return invalid("max_body_bytes", "must be between 1024 and 67108864")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return invalid("log_level", "must be debug, info, warn or error")
	}
	names := make([]payment.Method, 0, len(c.Methods))
	for name := range c.Methods {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	for _, name := range names {
		if err := c.validateMethod(name); err != nil {
			return err
		}
	}
	for _, n := range payment.Networks {
		if err := c.validateNetwork(n); err != nil {
			return err
		}
	}
	if err := c.validateRates(); err != nil {
		return err
	}
	if err := c.validateConsole(); err != nil {
		return err
	}
	if err := c.validateCheckout(); err != nil {
		return err
	}
	if err := c.validateProduction(); err != nil {
		return err
	}
	if c.Events.MaxWaiters < 1 || c.Events.MaxWaiters > 100000 {
		return invalid("events.max_waiters", "must be between 1 and 100000")
	}
	if c.Events.MaxWaitersPerKey < 1 || c.Events.MaxWaitersPerKey > c.Events.MaxWaiters {
		return invalid("events.max_waiters_per_key", "must be between 1 and events.max_waiters (%d)", c.Events.MaxWaiters)
	}
	if c.Events.PollInterval.Duration < 100*time.Millisecond || c.Events.PollInterval.Duration > time.Minute {
		return invalid("events.poll_interval", "must be between 100ms and 1m, got %s", c.Events.PollInterval)
	}
	seen := map[string]bool{}
	for i, w := range c.Webhooks {
		f := fmt.Sprintf("webhooks[%d]", i)
		if w.Name == "" || seen[w.Name] {
			return invalid(f+".name", "must be set and unique")
		}
		seen[w.Name] = true
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(f+".url", "must be an https URL (http only to this host)")
		}
		if u.Scheme == "http" && !LoopbackHost(u.Hostname()) {
			return invalid(f+".url", "must be https: events are signed, not encrypted, and http to another host "+
				"shows every payment on the way (http is accepted to this host only: 127.0.0.1, ::1, localhost)")
		}
		if w.SecretEnv == "" {
			return invalid(f+".secret_env", "must name the environment variable holding the signing secret")
		}
		if w.NextSecretEnv == w.SecretEnv {
			return invalid(f+".next_secret_env", "must name another variable than secret_env")
		}
		if w.Start != "" && w.Start != "beginning" && w.Start != "now" {
			return invalid(f+".start", "must be beginning or now")
		}
	}
	return nil
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

func (c *Config) validateMethod(name payment.Method) error {
	info, ok := payment.LookupMethod(name)
	if !ok {
		return invalid("methods."+string(name), "unknown method")
	}
	m := c.Methods[name]
	f := "methods." + string(name)
	if m.Confirmations == nil || *m.Confirmations < 0 || *m.Confirmations > 10000 {
		return invalid(f+".confirmations", "must be between 0 and 10000")
	}
	if (info.Network == payment.Bitcoin || info.Network == payment.Litecoin) && *m.Confirmations == 0 {
		return invalid(f+".confirmations", "must be at least 1: %s has no finality marker", info.Network)
	}
	if err := m.resolve(f, info); err != nil {
		return err
	}
	if m.LargeAmountUSD != "" {
		if m.LargeConfirmations == nil {
			return invalid(f+".large_confirmations", "must be set when large_amount_usd is")
		}
		if *m.LargeConfirmations < 0 || *m.LargeConfirmations > 10000 {
			return invalid(f+".large_confirmations", "must be between 0 and 10000")
		}
		if (info.Network == payment.Bitcoin || info.Network == payment.Litecoin) && *m.LargeConfirmations == 0 {
			// A large payment would confirm with 0 blocks: at once, in the
			// mempool, on a chain where nothing is ever final.
			return invalid(f+".large_confirmations", "must be at least 1: %s has no finality marker", info.Network)
		}
	}
	if m.DisplayDecimals == nil || *m.DisplayDecimals < 0 || *m.DisplayDecimals > info.Decimals {
		return invalid(f+".display_decimals", "must be between 0 and %d", info.Decimals)
	}
	if info.Asset != payment.Native && m.Enabled && m.Contract == "" {
		return invalid(f+".contract", "token methods need their contract address")
	}
	if m.Enabled {
		n := c.Networks[info.Network]
		if n == nil || !n.Enabled {
			return invalid(f+".enabled", "method needs networks.%s.enabled", info.Network)
		}
	}
	return nil
}

func (c *Config) validateNetwork(name payment.Network) error {
	n := c.Networks[name]
	f := "networks." + string(name)
	switch n.Chain {
	case "mainnet", "testnet", "regtest":
	default:
		return invalid(f+".chain", "must be mainnet, testnet or regtest")
	}
	if n.PollInterval.Duration < 10*time.Millisecond {
		return invalid(f+".poll_interval", "must be at least 10ms")
	}
	if n.Gap < 0 || n.Gap > 10000 {
		return invalid(f+".gap", "must be between 0 and 10000")
	}
	if n.Parallel < 1 || n.Parallel > 64 {
		return invalid(f+".parallel", "must be between 1 and 64")
	}
	if n.MaxLagBlocks < 0 || n.SafetyDepth < 0 {
		return invalid(f+".max_lag_blocks", "must not be negative")
	}
	if n.StartHeight != nil && *n.StartHeight < 0 {
		return invalid(f+".start_height", "must not be negative")
	}
	if n.CookieFile != "" && name != payment.Bitcoin && name != payment.Litecoin {
		return invalid(f+".cookie_file", "only Bitcoin and Litecoin nodes use an RPC cookie")
	}
	if !n.Enabled {
		return nil
	}
	if u, err := url.Parse(n.RPCURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(f+".rpc_url", "must be an http(s) URL of the node (or PAYWATCH_%s_RPC_URL)", strings.ToUpper(string(name)))
	}
	if err := validateNotifyURL(name, n.NotifyURL); err != nil {
		return err
	}
	if name == payment.Solana {
		switch n.Mode {
		case "block", "address", "auto":
		default:
			return invalid(f+".mode", "must be block, address or auto")
		}
		if n.AccountKey != "" {
			return invalid(f+".account_key", "Solana has no public derivation: import a pool with `paywatch pool import`")
		}
		return nil
	}
	if name == payment.Ethereum {
		switch n.Trace {
		case "auto", "on", "off":
		default:
			return invalid(f+".trace", "must be auto, on or off")
		}
	}
	if n.AccountKey == "" {
		return invalid(f+".account_key", "must be the account-level extended public key")
	}
	if looksPrivate(n.AccountKey) {
		return invalid(f+".account_key", "is a PRIVATE extended key; paywatch is watch-only and needs the public key (xpub)")
	}
	return nil
}

// parseProxy parses a trusted proxy: an IP or a CIDR.
func parseProxy(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	ip = ip.Unmap()
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}

// Proxies returns TrustedProxies parsed (Validate has checked them).
func (c *Config) Proxies() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(c.TrustedProxies))
	for _, s := range c.TrustedProxies {
		if p, err := parseProxy(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// LoopbackHost reports whether host (a name or an IP, no port) is this
// machine: localhost or a loopback address.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// LoopbackAddr reports whether a listen address (host:port) listens on
// this machine only; ":8080" and "0.0.0.0:8080" do not.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && LoopbackHost(host)
}

// MainnetNetworks returns the enabled networks on chain mainnet, in
// payment.Networks order: where real money is watched.
func (c *Config) MainnetNetworks() []payment.Network {
	var out []payment.Network
	for _, n := range payment.Networks {
		if nc := c.Networks[n]; nc != nil && nc.Enabled && nc.Chain == "mainnet" {
			out = append(out, n)
		}
	}
	return out
}

// validateProduction refuses, once any enabled network is on mainnet, the
// settings that only make sense in the sandbox: an account key of a public
// test mnemonic (its private keys are anyone's, so deposits to its
// addresses are anyone's to take), static rates (a made-up price for real
// payments) and one-time sign-in links (a session without an API key).
func (c *Config) validateProduction() error {
	mainnet := c.MainnetNetworks()
	if len(mainnet) == 0 {
		return nil
	}
	first := "networks." + string(mainnet[0]) + " is on chain: mainnet"
	for _, n := range mainnet {
		nc := c.Networks[n]
		if what, ok := addresses.WellKnownTestKey(nc.AccountKey); ok {
			return invalid("networks."+string(n)+".account_key", "%s is the well-known test key %s: its private keys are public, "+
				"so anyone can take what is paid to its addresses; chain: mainnet needs the account key of your own wallet",
				abbreviate(nc.AccountKey), what)
		}
	}
	for i, s := range c.Rates.Sources {
		if s == "static" {
			return invalid(fmt.Sprintf("rates.sources[%d]", i), "static prices are for the sandbox and tests, and %s: "+
				"real payments would be quoted at a made-up rate; list live sources (coinbase, kraken, binance, coingecko)", first)
		}
	}
	if c.Console.SignInLinks {
		return invalid("console.signin_links", "one-time sign-in links are the sandbox's, and %s: "+
			"they open a session without an API key; sign in with an API key instead", first)
	}
	if sc := c.Console.SecureCookies; c.Console.Enabled && sc != nil && !*sc && !LoopbackAddr(c.ConsoleListen()) {
		return invalid("console.secure_cookies", "is false on %s, which is not loopback, and %s: a session cookie "+
			"sent over plain http is a finance clerk's key to whoever reads the traffic; terminate TLS in front "+
			"and leave secure_cookies unset", c.ConsoleListen(), first)
	}
	return nil
}

// ConsoleListen is the address the console is served on: admin_listen
// when set, else listen.
func (c *Config) ConsoleListen() string {
	if c.AdminListen != "" {
		return c.AdminListen
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

// abbreviate shortens a public key for a message: its first and last
// characters name it.
func abbreviate(k string) string {
	if len(k) <= 16 {
		return k
	}
	return k[:8] + "…" + k[len(k)-6:]
}

// validateNotifyURL checks networks.<name>.notify_url by what the network's
// node pushes on.
func validateNotifyURL(name payment.Network, raw string) error {
	if raw == "" {
		return nil
	}
	f := "networks." + string(name) + ".notify_url"
	u, err := url.Parse(raw)
	switch name {
	case payment.Ethereum, payment.Solana:
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return invalid(f, "must be a ws(s) URL of the node's websocket (or PAYWATCH_%s_NOTIFY_URL)", strings.ToUpper(string(name)))
		}
	case payment.Bitcoin, payment.Litecoin:
		if err != nil || u.Scheme != "tcp" || u.Hostname() == "" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return invalid(f, "must be the node's ZMQ publisher as tcp://host:port (its -zmqpubhashblock and -zmqpubhashtx address)")
		}
	default:
		return invalid(f, "%s nodes push no changes: leave it empty", name)
	}
	return nil
}

// looksPrivate spots private extended keys by their well-known prefixes.
func looksPrivate(k string) bool {
	for _, p := range []string{"xprv", "yprv", "zprv", "tprv", "uprv", "vprv", "Ltpv", "Mtpv", "ttpv"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func (c *Config) validateRates() error {
	r := c.Rates
	if len(r.Sources) == 0 {
		return invalid("rates.sources", "must list at least one source")
	}
	for i, s := range r.Sources {
		switch s {
		case "coinbase", "kraken", "binance", "coingecko":
		case "static":
			if len(r.Static) == 0 {
				return invalid("rates.static", "must list prices when the static source is used")
			}
		default:
			return invalid(fmt.Sprintf("rates.sources[%d]", i), "unknown source %q (coinbase, kraken, binance, coingecko, static)", s)
		}
	}
	for sym, p := range r.Static {
		if v, err := payment.ParseUnits(p, 18); err != nil || v.Sign() <= 0 {
			return invalid("rates.static."+sym, "%q is not a positive decimal price", p)
		}
	}
	if r.MaxAge.Duration < time.Second {
		return invalid("rates.max_age", "must be at least 1s")
	}
	if err := c.Rates.resolveMaxDeviation(); err != nil {
		return err
	}
	if len(r.Sources) == 1 && r.MinSources != 1 {
		return invalid("rates.min_sources", "is %d but only one source is listed: a single-source setup must say min_sources: 1 explicitly, or list a second source", r.MinSources)
	}
	if r.MinSources < 1 || r.MinSources > len(r.Sources) {
		return invalid("rates.min_sources", "must be between 1 and the number of sources")
	}
	if r.Refresh == "" {
		return invalid("rates.refresh", "must be a cron schedule such as @every 30s")
	}
	return c.Rates.resolveRefresh()
}

// MethodConfirmations returns the confirmations an intent of usd needs.
func (c *Config) MethodConfirmations(m payment.Method, usd payment.Cents) int {
	mc := c.Methods[m]
	if large, ok := mc.LargeAmount(); ok && mc.LargeConfirmations != nil && usd >= large {
		return *mc.LargeConfirmations
	}
	return *mc.Confirmations
}

// Redacted returns url with any password replaced, for logs and errors.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}
