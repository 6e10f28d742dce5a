package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"
	"golang.org/x/sync/errgroup"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/verify"
)

// Deps are what a Daemon takes from its caller rather than from its
// config. The zero Deps is production: everything is built from the config.
type Deps struct {
	// Pools gives the endpoint pool a node client sends through (nil, or
	// nil for a client of one rpc_url): nodes.Pool. Its endpoints show in
	// /v1/status and the metrics, and decide availability.
	Pools func(src chains.Source) *endpoints.Pool
	// Log is the daemon's logger; nil discards.
	Log *slog.Logger
	// Clock is the clock of everything recorded and scheduled; nil is the
	// wall clock.
	Clock clock.Clock
	// Store is an open, migrated database the caller keeps (and closes);
	// nil opens cfg.DatabaseURL, applies the migrations, and Close closes it.
	Store *store.Store
	// Sources scan a network from something other than the node client its
	// config names (a test's scripted chain); a network left out gets its
	// node client from Nodes.
	Sources map[payment.Network]chains.Source
	// Nodes builds a network's node client from the config (nodes.New);
	// mode, when not nil, reports a mode for the status. Nil refuses a
	// network left out of Sources.
	Nodes func(ctx context.Context, cfg *config.Config, n payment.Network, getenv func(string) string, log *slog.Logger) (src chains.Source, mode func() string, err error)
	// Quotes is the rate book; nil builds one from cfg.Rates.
	Quotes *rates.Book
	// Links are the payment page's links (a test's); nil builds them from
	// the secret checkout.secret_env names, when checkout is enabled.
	Links *checkout.Links
	// Getenv reads the secrets the config names by environment variable;
	// nil is os.Getenv.
	Getenv func(string) string
	// StatusCache is how long a network's availability answer is reused:
	// zero is one second, negative never (a test that changes a network's
	// health and asks at once).
	StatusCache time.Duration
}

// Daemon is one paywatch instance: the store, the rate book, the payment
// core and the layers above it, the chain sources and their scanners'
// leaders, the HTTP listeners and the background services. New builds it;
// Run serves.
type Daemon struct {
	cfg       *config.Config
	log       *slog.Logger
	clock     clock.Clock
	getenv    func(string) string
	store     *store.Store
	ownStore  bool
	book      *rates.Book
	symbols   []string
	providers int
	svc       *intents.Service
	finance   *finance.Service
	reports   *reports.Service
	sink      *ingest.Sink
	nets      *availability.Networks
	watch     map[payment.Network]*chains.WatchSet
	sources   map[payment.Network]chains.Source
	modes     map[payment.Network]func() string
	pools     map[payment.Network]*endpoints.Pool // networks listing endpoints
	api       *api.Server
	console   *console.Console // nil when console.enabled is false
	pages     *checkout.Page   // nil when checkout.enabled is false
	links     *checkout.Links  // the pages' links; nil when checkout is off
	reg       *prometheus.Registry
	metrics   *scanMetrics
	ops       *opsMetrics
	http      *httpMetrics
	// adminAddr is where admin_listen listens, once Run listens there.
	adminAddr string
	// reconciler checks recorded transfers against the nodes.
	reconciler *reconcile.Reconciler
	// verifier is the second source for large payments (nil: no network
	// sets large_amount_usd).
	verifier *verify.Verifier
	// sweeps is when the deadline sweep runs (expiry_sweep).
	sweeps cron.Schedule
	// leads says, per network, whether this instance leads its scanner
	// (set by the network's ingest.Leader; read by the reconciler).
	leads map[payment.Network]*atomic.Bool
	// storesSeen is what the last ReloadStores read (stores.go).
	storesMu   sync.Mutex
	storesSeen *storesState
}

// watchSets adapts the per-network sets to intents.Watcher.
type watchSets map[payment.Network]*chains.WatchSet

func (w watchSets) Watch(n payment.Network, keys ...[]byte) {
	if s := w[n]; s != nil {
		s.Add(keys...)
	}
}

// New builds a daemon from a validated config: it opens and migrates the
// database (unless deps gives one), refuses a mainnet Solana pool holding a
// sandbox key, and builds every component; nothing runs until Run.
func New(ctx context.Context, cfg *config.Config, deps Deps) (*Daemon, error) {
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	log := logs.Or(deps.Log)
	sweeps := cfg.SweepSchedule()
	if sweeps == nil {
		return nil, errors.New("daemon: expiry_sweep is not resolved: the config must come from config.Load, Parse or Validate")
	}
	d := &Daemon{sweeps: sweeps, cfg: cfg, log: log, clock: clock.Or(deps.Clock), getenv: deps.Getenv, store: deps.Store, watch: map[payment.Network]*chains.WatchSet{},
		sources: map[payment.Network]chains.Source{}, modes: map[payment.Network]func() string{},
		leads: map[payment.Network]*atomic.Bool{}}
	if d.getenv == nil {
		d.getenv = os.Getenv
	}
	if d.store == nil {
		st, err := store.OpenWith(ctx, cfg.DatabaseURL, store.OptionsOf(cfg.Database, log.With("component", "database")))
		if err != nil {
			return nil, err
		}
		d.store, d.ownStore = st, true
		if n, err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, err
		} else if n > 0 {
			log.Info("migrations applied", "count", n)
		}
	}
	if err := checkWellKnownPool(ctx, cfg, d.store); err != nil {
		d.Close()
		return nil, err
	}
	if err := EnsureStores(ctx, cfg, d.store, d.clock.Now()); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.wire(ctx, deps); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the database when New opened it.
func (d *Daemon) Close() {
	if d.ownStore {
		d.store.Close()
	}
}

// Store is the daemon's database.
func (d *Daemon) Store() *store.Store { return d.store }

// Service is the payment core.
func (d *Daemon) Service() *intents.Service { return d.svc }

// Finance is the finance service (inbox, resolutions, ledger).
func (d *Daemon) Finance() *finance.Service { return d.finance }

// Reports is the reports service.
func (d *Daemon) Reports() *reports.Service { return d.reports }

// Sink is what the scanners write to.
func (d *Daemon) Sink() *ingest.Sink { return d.sink }

// Networks is the networks' availability and status.
func (d *Daemon) Networks() *availability.Networks { return d.nets }

// API is the HTTP API.
func (d *Daemon) API() *api.Server { return d.api }

// Quotes is the rate book.
func (d *Daemon) Quotes() *rates.Book { return d.book }

// WatchSet is network n's in-memory set of watched keys (nil when n is
// not enabled).
func (d *Daemon) WatchSet(n payment.Network) *chains.WatchSet { return d.watch[n] }

// Leads reports whether this instance leads network n's scanner now.
func (d *Daemon) Leads(n payment.Network) bool {
	b := d.leads[n]
	return b != nil && b.Load()
}

// Registry holds the daemon's metrics.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// AdminAddr is where admin_listen listens, once Run listens there.
func (d *Daemon) AdminAddr() string { return d.adminAddr }

// wire builds rates, address derivers, chain sources, the services, the
// API, the payment pages and the console.
func (d *Daemon) wire(ctx context.Context, deps Deps) error {
	cfg := d.cfg
	symbols := map[string]bool{}
	for _, m := range payment.Methods {
		if mc := cfg.Methods[m.Method]; mc != nil && mc.Enabled {
			symbols[m.Symbol] = true
		}
	}
	for s := range symbols {
		d.symbols = append(d.symbols, s)
	}
	d.book = deps.Quotes
	if d.book == nil {
		providers, err := rateProviders(cfg.Rates)
		if err != nil {
			return err
		}
		d.providers = len(providers)
		d.book = rates.NewBook(rates.BookConfig{MaxAge: cfg.Rates.MaxAge.Duration, MaxDeviation: cfg.Rates.MaxDeviationFraction(), MinSources: cfg.Rates.MinSources,
			Clock: deps.Clock}, providers, d.symbols, d.log)
	} else {
		d.providers = len(cfg.Rates.Sources)
	}

	addrs := map[payment.Network]intents.AddressSource{}
	sourcesByNet := map[payment.Network]string{}
	// Every network's count in one statement.
	counts, err := d.store.CountAddressesAll(ctx)
	if err != nil {
		return err
	}
	for _, n := range payment.Networks {
		nc := cfg.Networks[n]
		if !nc.Enabled {
			continue
		}
		// Sized for what the first refresh loads, so a large set is
		// allocated once rather than grown (and copied) at start.
		watched := counts[string(n)]
		d.watch[n] = chains.NewWatchSet(int(watched + watched/32 + 1024))
		d.leads[n] = new(atomic.Bool)
		if n == payment.Solana {
			addrs[n] = intents.AddressSource{}
			continue
		}
		der, err := addresses.NewDeriver(n, nc.AccountKey, nc.Chain)
		if err != nil {
			return fmt.Errorf("networks.%s.account_key: %w", n, err)
		}
		fp, err := addresses.Fingerprint(nc.AccountKey)
		if err != nil {
			return fmt.Errorf("networks.%s.account_key: %w", n, err)
		}
		addrs[n] = intents.AddressSource{Deriver: der, Source: fp, Gap: nc.Gap}
		sourcesByNet[n] = fp
	}
	for _, n := range payment.Networks {
		if !cfg.Networks[n].Enabled {
			continue
		}
		if src := deps.Sources[n]; src != nil {
			d.sources[n] = src
			continue
		}
		if deps.Nodes == nil {
			return fmt.Errorf("networks.%s: no node client (daemon.Deps.Nodes is nil)", n)
		}
		src, mode, err := deps.Nodes(ctx, cfg, n, d.getenv, d.log)
		if err != nil {
			return fmt.Errorf("networks.%s: %w", n, err)
		}
		d.sources[n] = src
		if mode != nil {
			d.modes[n] = mode
		}
	}
	d.pools = map[payment.Network]*endpoints.Pool{}
	if deps.Pools != nil {
		for n, src := range d.sources {
			if p := deps.Pools(src); p != nil {
				d.pools[n] = p
			}
		}
	}
	cache := deps.StatusCache
	if cache == 0 {
		cache = time.Second
	}
	d.nets = &availability.Networks{Store: d.store, Config: cfg, Sources: sourcesByNet, CacheFor: max(cache, 0), Clock: deps.Clock,
		Endpoints:    d.endpointStatus,
		Verification: d.verificationStatus,
		Modes: func(n payment.Network) string {
			if f := d.modes[n]; f != nil {
				return f()
			}
			return ""
		}}
	d.reg = prometheus.NewRegistry()
	for n, set := range d.watch {
		d.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "paywatch_watched_keys_loaded",
			Help: "Keys in this instance's in-memory watched set.", ConstLabels: prometheus.Labels{"network": string(n)}},
			func() float64 { return float64(set.Len()) }))
	}
	d.metrics = newScanMetrics(ctx, d.reg, d.nets)
	d.reg.MustRegister(endpointCollector(d.pools))
	var endpoints []string
	for _, w := range cfg.Webhooks {
		endpoints = append(endpoints, w.Name)
	}
	var enabled []payment.Network
	for n := range d.watch {
		enabled = append(enabled, n)
	}
	d.http = newHTTPMetrics(d.reg)
	d.ops = newOpsMetrics(ctx, d.reg, d.store, d.book, d.symbols, d.providers, endpoints, enabled)
	if err := d.wireReconciler(); err != nil {
		return err
	}
	d.reg.MustRegister(newPoolCollector(d.store, d.log))
	opt := intents.Options{Store: d.store, Config: cfg, Quotes: d.book, Addresses: addrs, Chains: d.nets,
		Watcher: watchSets(d.watch), Clock: deps.Clock, Log: d.log}
	links := deps.Links
	if links == nil && cfg.Checkout.Enabled {
		var err error
		if links, err = checkout.NewLinks([]byte(d.getenv(cfg.Checkout.SecretEnv)), cfg.Checkout); err != nil {
			return fmt.Errorf("checkout.secret_env: $%s: %w", cfg.Checkout.SecretEnv, err)
		}
	}
	if links != nil {
		opt.Pages = links
		d.links = links
	}
	d.svc = intents.New(opt)
	if err := d.ReloadStores(ctx); err != nil {
		return err
	}
	d.finance = finance.New(finance.Options{Store: d.store, Redecider: d.svc, Quotes: d.book, Clock: deps.Clock, Log: d.log,
		Bounds: finance.BoundsOf(cfg)})
	d.reports = reports.New(reports.Options{Store: d.store, Clock: deps.Clock, Log: d.log})
	d.sink = ingest.New(ingest.Options{Store: d.store, Config: cfg, Decider: d.svc, Credits: d.finance, Counter: d.metrics,
		Clock: deps.Clock, Log: d.log})
	d.wireVerifier()
	if err := d.svc.EnsureLookahead(ctx); err != nil {
		return err
	}
	var apiMetrics http.Handler // on the admin listener instead, when there is one
	if cfg.AdminAddr() == "" {
		apiMetrics = d.metricsHandler()
	}
	d.api = api.New(api.Options{Service: d.svc, Reader: d.store, Finance: d.finance, Reports: d.reports, Config: cfg, Status: d.nets, Clock: deps.Clock,
		Log: d.log, Metrics: apiMetrics})
	if cfg.Checkout.Enabled {
		var err error
		if d.pages, err = checkout.New(checkout.Options{Intents: d.svc, Payables: d.svc, Feed: d.store, Wake: checkout.NotifierWaker{N: d.store.Notifier()},
			Links: links, Config: cfg, Clock: deps.Clock, Log: d.log}); err != nil {
			return err
		}
		pages := d.pages
		d.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "paywatch_checkout_live_connections",
			Help: "Payment pages' live connections open on this instance."}, func() float64 { return float64(pages.Live()) }))
	}
	if cfg.Console.Enabled {
		var err error
		if d.console, err = console.New(console.Options{Service: d.svc, Reader: d.store, Finance: d.finance, Reports: d.reports, Status: d.nets,
			Config: cfg, Clock: deps.Clock, Log: d.log, Events: d.api, SignInLinks: cfg.Console.SignInLinks}); err != nil {
			return err
		}
	}
	return nil
}

// rateProviders builds the configured rate sources.
func rateProviders(rc config.Rates) ([]rates.Provider, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	var out []rates.Provider
	for _, name := range rc.Sources {
		if name == "static" {
			out = append(out, rates.NewStaticPrices(rc.StaticPrices()))
			continue
		}
		p, err := rates.NewProvider(name, rc.BaseURLs[name], client)
		if err != nil {
			return nil, fmt.Errorf("rates.sources: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Run serves until ctx ends: the API (and the payment pages and console
// mounted beside it), the admin listener, the store's notifications, the
// services' loops, the deadline sweeps, the reconciler, the webhook
// senders, and one leader per enabled network that scans it while this
// instance holds the network's lease. ready, when not nil, receives the
// API's address once it listens.
func (d *Daemon) Run(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", d.cfg.Listen, err)
	}
	var adminLn net.Listener
	if a := d.cfg.AdminAddr(); a != "" {
		if adminLn, err = net.Listen("tcp", a); err != nil {
			ln.Close()
			return fmt.Errorf("admin_listen %s: %w", a, err)
		}
		d.adminAddr = adminLn.Addr().String()
	}
	g, ctx := errgroup.WithContext(ctx)
	serveHTTP(ctx, g, ln, d.http.wrap(d.handler()))
	if adminLn != nil {
		serveHTTP(ctx, g, adminLn, d.adminHandler())
		d.log.Info("paywatch admin listener (metrics, console)", "listen", d.adminAddr)
	}
	g.Go(func() error { return d.store.Run(ctx) })
	g.Go(func() error { return d.svc.Run(ctx) })
	g.Go(func() error { return d.reloadStores(ctx) })
	g.Go(func() error { return d.api.Run(ctx) })
	g.Go(func() error { return d.book.RunOn(ctx, d.cfg.Rates.RefreshSchedule()) })
	g.Go(func() error { return d.finance.RecordQuotes(ctx, d.book.Symbols()) })
	g.Go(func() error { return d.svc.RunSweeps(ctx, d.sweeps) })
	g.Go(func() error { return d.reconciler.Run(ctx) })
	if d.verifier != nil {
		g.Go(func() error { return d.verifier.Run(ctx) })
	}
	if len(d.pools) > 0 {
		g.Go(func() error { return d.recordEndpoints(ctx) })
	}
	for n, src := range d.sources {
		l := d.leader(n, src)
		g.Go(func() error { return l.Run(ctx) })
	}
	for _, hook := range d.webhookSenders() {
		g.Go(func() error { return hook(ctx) })
	}
	if d.console != nil {
		g.Go(func() error { return d.console.Run(ctx) })
	}
	if d.pages != nil {
		g.Go(func() error { return d.pages.Run(ctx) })
	}
	d.log.Info("paywatch serving", "listen", ln.Addr().String(), "instance", d.cfg.Instance)
	if ready != nil {
		ready(ln.Addr().String())
	}
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// leader is network n's scanner leader over src.
func (d *Daemon) leader(n payment.Network, src chains.Source) *ingest.Leader {
	nc := d.cfg.Networks[n]
	return &ingest.Leader{Store: d.store, Sink: d.sink, Source: src, Watch: d.watch[n],
		Scanner: chains.ScannerConfig{Network: n, Chain: nc.Chain, PollInterval: nc.PollInterval.Duration,
			Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight),
			Observe: d.metrics.observe(n)},
		Holder: d.cfg.Instance,
		Leading: func(yes bool) {
			if b := d.leads[n]; b != nil {
				b.Store(yes)
			}
			d.ops.leading(n, yes)
		}, Log: d.log}
}

// metricsHandler serves the Prometheus registry.
func (d *Daemon) metricsHandler() http.Handler {
	return promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{})
}

// adminHandler serves /metrics and the console on admin_listen.
func (d *Daemon) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", d.metricsHandler())
	if d.console != nil {
		mux.Handle("/console/", d.console)
		mux.Handle("/console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	}
	mux.Handle("/", http.NotFoundHandler())
	return mux
}

// handler serves the API, the console under /console/ when enabled and
// there is no admin listener, and the payment pages under /pay/ when
// enabled (always here: customers reach them where they reach the API).
func (d *Daemon) handler() http.Handler {
	console := d.console != nil && d.cfg.AdminAddr() == ""
	if !console && d.pages == nil {
		return d.api
	}
	mux := http.NewServeMux()
	if console {
		mux.Handle("/console/", d.console)
		mux.Handle("/console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	}
	if d.pages != nil {
		mux.Handle("/pay/", d.pages)
	}
	mux.Handle("/", d.api)
	return mux
}

// MaxHeaderBytes bounds a request's headers on every listener of the
// daemon (net/http's default is 1 MB): an API key, a session cookie, a
// Last-Event-ID and a proxy's forwarding headers fit many times over, and
// a payment page's live stream cannot be made to hold megabytes (issue 34:
// 100 streams with a 1 MB header grew the daemon by 176 MB). A larger
// request is answered 431.
const MaxHeaderBytes = 16 << 10

// serveHTTP serves h on ln until ctx ends, then drains for a bounded time.
func serveHTTP(ctx context.Context, g *errgroup.Group, ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 90 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: MaxHeaderBytes}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		// Draining outlives the cancelled context, for a bounded time.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
}
