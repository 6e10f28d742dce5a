package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"
	"golang.org/x/sync/errgroup"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve [--config FILE]", stderr)
	cfgPath := configFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	d, err := newDaemon(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer d.close()
	return d.run(ctx, nil)
}

// daemon is one paywatch instance: everything serve runs.
type daemon struct {
	cfg     *config.Config
	log     *slog.Logger
	store   *store.Store
	book    *rates.Book
	svc     *intents.Service
	finance *finance.Service
	reports *reports.Service
	sink    *ingest.Sink
	nets    *availability.Networks
	watch   map[payment.Network]*chains.WatchSet
	sources map[payment.Network]chains.Source
	modes   map[payment.Network]func() string
	api     *api.Server
	console *console.Console // nil when console.enabled is false
	pages   *checkout.Page   // nil when checkout.enabled is false
	reg     *prometheus.Registry
	metrics *scanMetrics
	ops     *opsMetrics
	http    *httpMetrics
	// adminAddr is where admin_listen listens, once run listens there.
	adminAddr string
	// reconciler checks recorded transfers against the nodes (issue 27).
	reconciler *reconcile.Reconciler
}

// watchSets adapts the per-network sets to intents.Watcher.
type watchSets map[payment.Network]*chains.WatchSet

func (w watchSets) Watch(n payment.Network, keys ...[]byte) {
	if s := w[n]; s != nil {
		s.Add(keys...)
	}
}

func newDaemon(ctx context.Context, cfg *config.Config, log *slog.Logger) (*daemon, error) {
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, store.OptionsOf(cfg.Database, log.With("component", "database")))
	if err != nil {
		return nil, err
	}
	d := &daemon{cfg: cfg, log: log, store: st, watch: map[payment.Network]*chains.WatchSet{},
		sources: map[payment.Network]chains.Source{}, modes: map[payment.Network]func() string{}}
	if n, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	} else if n > 0 {
		log.Info("migrations applied", "count", n)
	}
	if err := checkWellKnownPool(ctx, cfg, st); err != nil {
		st.Close()
		return nil, err
	}
	if err := d.wire(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return d, nil
}

func (d *daemon) close() { d.store.Close() }

// wire builds rates, address derivers, chain sources, the service and the API.
func (d *daemon) wire(ctx context.Context) error {
	cfg := d.cfg
	providers, err := rateProviders(cfg.Rates)
	if err != nil {
		return err
	}
	symbols := map[string]bool{}
	for _, m := range payment.Methods {
		if mc := cfg.Methods[string(m.Method)]; mc != nil && mc.Enabled {
			symbols[m.Symbol] = true
		}
	}
	var syms []string
	for s := range symbols {
		syms = append(syms, s)
	}
	dev, _ := new(big.Rat).SetString(cfg.Rates.MaxDeviation)
	d.book = rates.NewBook(rates.BookConfig{MaxAge: cfg.Rates.MaxAge.Duration, MaxDeviation: dev, MinSources: cfg.Rates.MinSources},
		providers, syms, d.log)

	addrs := map[payment.Network]intents.AddressSource{}
	sourcesByNet := map[payment.Network]string{}
	for _, n := range payment.Networks {
		nc := cfg.Networks[string(n)]
		if !nc.Enabled {
			continue
		}
		// Sized for what the first refresh loads, so a large set is
		// allocated once rather than grown (and copied) at start.
		watched, err := d.store.CountAddresses(ctx, string(n))
		if err != nil {
			return err
		}
		d.watch[n] = chains.NewWatchSet(int(watched + watched/32 + 1024))
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
		if !cfg.Networks[string(n)].Enabled {
			continue
		}
		src, mode, err := newSource(ctx, cfg, n, d.log)
		if err != nil {
			return fmt.Errorf("networks.%s: %w", n, err)
		}
		d.sources[n] = src
		if mode != nil {
			d.modes[n] = mode
		}
	}
	d.nets = &availability.Networks{Store: d.store, Config: cfg, Sources: sourcesByNet, CacheFor: time.Second, Modes: func(n payment.Network) string {
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
	var endpoints []string
	for _, w := range cfg.Webhooks {
		endpoints = append(endpoints, w.Name)
	}
	var enabled []payment.Network
	for n := range d.watch {
		enabled = append(enabled, n)
	}
	d.http = newHTTPMetrics(d.reg)
	d.ops = newOpsMetrics(ctx, d.reg, d.store, d.book, syms, len(providers), endpoints, enabled)
	if err := d.wireReconciler(); err != nil {
		return err
	}
	d.reg.MustRegister(newPoolCollector(d.store, d.log))
	opt := intents.Options{Store: d.store, Config: cfg, Quotes: d.book, Addresses: addrs, Chains: d.nets,
		Watcher: watchSets(d.watch), Log: d.log}
	var links *checkout.Links
	if cfg.Checkout.Enabled {
		if links, err = checkout.NewLinks([]byte(os.Getenv(cfg.Checkout.SecretEnv)), cfg.Checkout); err != nil {
			return fmt.Errorf("checkout.secret_env: $%s: %w", cfg.Checkout.SecretEnv, err)
		}
		opt.Pages = links
	}
	d.svc = intents.New(opt)
	d.finance = finance.New(finance.Options{Store: d.store, Redecider: d.svc, Quotes: d.book, Log: d.log, Bounds: finance.BoundsOf(cfg)})
	d.reports = reports.New(reports.Options{Store: d.store, Log: d.log})
	d.sink = ingest.New(ingest.Options{Store: d.store, Config: cfg, Decider: d.svc, Credits: d.finance, Counter: d.metrics, Log: d.log})
	if err := d.svc.EnsureLookahead(ctx); err != nil {
		return err
	}
	var apiMetrics http.Handler // on the admin listener instead, when there is one
	if cfg.AdminListen == "" {
		apiMetrics = d.metricsHandler()
	}
	d.api = api.New(api.Options{Service: d.svc, Finance: d.finance, Reports: d.reports, Config: cfg, Status: d.nets, Log: d.log,
		Metrics: apiMetrics})
	if cfg.Checkout.Enabled {
		if d.pages, err = checkout.New(checkout.Options{Intents: d.svc, Feed: d.store, Wake: checkout.NotifierWaker{N: d.store.Notifier()}, Links: links,
			Config: cfg, Log: d.log}); err != nil {
			return err
		}
		pages := d.pages
		d.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "paywatch_checkout_live_connections",
			Help: "Payment pages' live connections open on this instance."}, func() float64 { return float64(pages.Live()) }))
	}
	if cfg.Console.Enabled {
		if d.console, err = console.New(console.Options{Service: d.svc, Finance: d.finance, Reports: d.reports, Status: d.nets, Config: cfg, Log: d.log, Events: d.api,
			SignInLinks: cfg.Console.SignInLinks}); err != nil {
			return err
		}
	}
	return nil
}

// metricsHandler serves the Prometheus registry.
func (d *daemon) metricsHandler() http.Handler {
	return promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{})
}

// adminHandler serves /metrics and the console on admin_listen.
func (d *daemon) adminHandler() http.Handler {
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
func (d *daemon) handler() http.Handler {
	console := d.console != nil && d.cfg.AdminListen == ""
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

// rateProviders builds the configured rate sources.
func rateProviders(rc config.Rates) ([]rates.Provider, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	var out []rates.Provider
	for _, name := range rc.Sources {
		if name == "static" {
			out = append(out, rates.NewStatic(rc.Static))
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

// run serves until ctx ends. ready, when not nil, receives the API address
// once it listens.
func (d *daemon) run(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", d.cfg.Listen, err)
	}
	var adminLn net.Listener
	if d.cfg.AdminListen != "" {
		if adminLn, err = net.Listen("tcp", d.cfg.AdminListen); err != nil {
			ln.Close()
			return fmt.Errorf("admin_listen %s: %w", d.cfg.AdminListen, err)
		}
		d.adminAddr = adminLn.Addr().String()
	}
	g, ctx := errgroup.WithContext(ctx)
	srv := &http.Server{Handler: d.http.wrap(d.handler()), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 90 * time.Second, IdleTimeout: 120 * time.Second}
	g.Go(func() error {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	})
	g.Go(func() error {
		<-ctx.Done()
		// Draining outlives the cancelled context, for a bounded time.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	if adminLn != nil {
		d.serveAdmin(ctx, g, adminLn)
	}
	g.Go(func() error { return d.store.Run(ctx) })
	g.Go(func() error { return d.svc.Run(ctx) })
	g.Go(func() error { return d.api.Run(ctx) })
	g.Go(func() error { return d.book.Run(ctx, d.cfg.Rates.Refresh) })
	g.Go(func() error { return d.finance.RecordQuotes(ctx, d.book.Symbols()) })
	g.Go(func() error { return d.sweep(ctx) })
	g.Go(func() error { return d.reconciler.Run(ctx) })
	for n, src := range d.sources {
		g.Go(func() error { return d.lead(ctx, n, src) })
	}
	for _, extra := range d.extraServices() {
		g.Go(func() error { return extra(ctx) })
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

// serveAdmin serves /metrics and the console on ln (admin_listen) until
// ctx ends.
func (d *daemon) serveAdmin(ctx context.Context, g *errgroup.Group, ln net.Listener) {
	srv := &http.Server{Handler: d.adminHandler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 90 * time.Second, IdleTimeout: 120 * time.Second}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	d.log.Info("paywatch admin listener (metrics, console)", "listen", d.adminAddr)
}

// sweep enforces deadlines on a cron schedule.
func (d *daemon) sweep(ctx context.Context) error {
	sched, err := cron.ParseStandard(d.cfg.ExpirySweep)
	if err != nil {
		return fmt.Errorf("expiry_sweep: %w", err)
	}
	for {
		next := sched.Next(time.Now())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(next)):
		}
		if n, err := d.svc.Sweep(ctx); err != nil && ctx.Err() == nil {
			d.log.Error("deadline sweep failed", "err", err)
		} else if n > 0 {
			d.log.Info("deadline sweep", "intents", n)
		}
	}
}

// lead runs a network's scanner while this instance holds its lease; a
// standby retries until the leader goes away.
func (d *daemon) lead(ctx context.Context, n payment.Network, src chains.Source) error {
	log := d.log.With("component", "leader", "network", string(n))
	for {
		lease, ok, err := d.store.TryLease(ctx, string(n), nil)
		if err != nil && ctx.Err() == nil {
			log.Warn("taking the scanner lease failed", "err", err)
		}
		if ok {
			log.Info("leading the scanner")
			d.ops.leading(n, true)
			err := d.scan(ctx, n, src, lease, log)
			d.ops.leading(n, false)
			if err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
}

// scan runs a network's scanner under lease until ctx ends or the lease is
// lost, with its helpers (lease watch, address wake-ups, node
// notifications) in one group: it returns once they have all stopped, and
// releases the lease.
func (d *daemon) scan(ctx context.Context, n payment.Network, src chains.Source, lease *store.Lease, log *slog.Logger) error {
	defer lease.Release()
	nc := d.cfg.Networks[string(n)]
	keys := &ingest.Keys{Store: d.store}
	sc := chains.NewScanner(chains.ScannerConfig{Network: n, Chain: nc.Chain, PollInterval: nc.PollInterval.Duration,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight),
		Observe: d.metrics.observe(n)}, src, d.sink.ScannerSinks(), keys, d.watch[n], d.log)
	g, gctx := errgroup.WithContext(ctx)
	sctx, cancel := context.WithCancel(gctx)
	defer cancel()
	g.Go(func() error {
		select {
		case <-lease.Lost():
			log.Warn("scanner lease lost; stopping the scanner")
			cancel()
		case <-sctx.Done():
		}
		return nil
	})
	// Addresses handed out by another instance wake the scanner.
	g.Go(func() error { return keys.Listen(sctx, sc.Wake) })
	if nt, ok := src.(chains.Notifier); ok {
		// Polling stays the floor; node notifications only wake it early.
		g.Go(func() error { return chains.KeepNotified(sctx, nt, sc.Wake, chains.NotifyConfig{}, log) })
	}
	g.Go(func() error {
		defer cancel() // the scanner ended: so do its helpers
		return sc.Run(sctx)
	})
	return g.Wait()
}
