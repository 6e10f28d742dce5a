package config

import (
	"errors"
	"fmt"
	"io"
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

	"github.com/paywatch/paywatch/payment"
)

// ErrInvalid wraps every validation error; the message names the field.
var ErrInvalid = errors.New("invalid config")

// Config is the whole configuration of one paywatch instance.
type Config struct {
	// Listen is the HTTP listen address of the API.
	Listen string `yaml:"listen"`
	// AdminListen is the listener serving the operator's surfaces,
	// /metrics and the console, and only them. "" (the default) serves them
	// on Listen when Listen is loopback, else on DefaultAdminListen
	// (loopback): a public API listener never serves them unless the
	// operator says so with "api" (on Listen, whatever it is) or an
	// address of their own. Keep it on loopback or a private interface.
	AdminListen string `yaml:"admin_listen"`
	// adminListen is AdminListen resolved (AdminAddr).
	adminListen string
	// TrustedProxies are the proxies (IPs or CIDRs) whose X-Forwarded-For
	// and X-Forwarded-Proto headers are believed; from any other peer they
	// are ignored.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// proxies are TrustedProxies parsed (Proxies).
	proxies []netip.Prefix
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
	// Stores are the stores the file declares (stores.go), ensured in the
	// database at every start; more can be made with `paywatch stores`.
	Stores []Store `yaml:"stores"`
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
			MaxLive: 5000, MaxLivePerClient: 20, MaxLivePerPage: 10, ProgressInterval: Duration{time.Second}},
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
					if err := decodeStrict(entry, target, ""); err != nil {
						return nil, fmt.Errorf("%w: %s.%s: %v", ErrInvalid, key.Value, name, err)
					}
				}
			default:
				rest.Content = append(rest.Content, key, val)
			}
		}
		if err := decodeStrict(rest, c, ""); err != nil {
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
	if err := c.checkEndpointEnv(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeStrict decodes a node of the file into v, refusing unknown keys
// with a clear message. It decodes the node itself, not a copy, so every
// error names the line of the file where the bad key or value is.
func decodeStrict(n *yaml.Node, v any, path string) error {
	if err := knownFields(n, reflect.TypeOf(v), path); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			// "line 40: cannot unmarshal !!str `x` into int": the first one,
			// without yaml's "unmarshal errors:" header.
			return errors.New(strings.TrimSpace(te.Errors[0]))
		}
		return err
	}
	return nil
}

// yamlUnmarshaler is a type that decodes itself (Duration); knownFields
// does not look inside it.
var yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// knownFields checks that every key of a mapping node is a field of the
// struct t decodes into, recursively; an unknown one is refused with its
// line, its path in the file and the keys that are known.
func knownFields(n *yaml.Node, t reflect.Type, path string) error {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			if err := knownFields(c, t, path); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return knownFields(n.Alias, t, path)
	}
	for t.Kind() == reflect.Pointer {
		if t.Implements(yamlUnmarshaler) {
			return nil
		}
		t = t.Elem()
	}
	if t.Implements(yamlUnmarshaler) || reflect.PointerTo(t).Implements(yamlUnmarshaler) {
		return nil
	}
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // a type error Decode reports with its line
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("line %d: %s: unknown field (known here: %s)", k.Line, join(k.Value), strings.Join(names, ", "))
			}
			if err := knownFields(val, ft, join(k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := knownFields(n.Content[i+1], t.Elem(), join(n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := knownFields(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
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
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return invalid("listen", "must be host:port, like 127.0.0.1:8080")
	}
	// Before the security checks: they judge where the console listens.
	if err := c.resolveAdminListen(); err != nil {
		return err
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	if err := c.validateReconcile(); err != nil {
		return err
	}
	if err := c.resolveProxies(); err != nil {
		return err
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
	if err := c.validateKeyVersions(); err != nil {
		return err
	}
	if err := c.validateEvents(); err != nil {
		return err
	}
	if err := c.validateStores(); err != nil {
		return err
	}
	return c.validateWebhooks()
}

// Redacted returns url with any password replaced, for logs and errors.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}
