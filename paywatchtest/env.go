package paywatchtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Prices are the static rates every Env quotes (USD per unit).
var Prices = map[string]string{
	"BTC": "50000", "LTC": "100", "ETH": "2500", "USDT": "1", "USDC": "1", "TRX": "0.25", "SOL": "200",
}

// Env is a running paywatch core for one test.
type Env struct {
	T       testing.TB
	Config  *config.Config
	Store   *store.Store
	Service *intents.Service
	Finance *finance.Service
	Reports *reports.Service
	Sink    *ingest.Sink
	Nets    *availability.Networks
	API     *api.Server
	Server  *httptest.Server
	Clock   *clock.Fake
	// Keys are plaintext API keys by scope name, and "all".
	Keys map[string]string
	// Chains are the scripted chains and Scanners their scanners, by network.
	Chains   map[payment.Network]*chainstest.Fake
	Scanners map[payment.Network]*chains.Scanner
	Watch    map[payment.Network]*chains.WatchSet
	// Daemon is the daemon the Env's components come from, built by
	// daemon.New as serve builds it (the Env drives its scanners itself
	// rather than running it).
	Daemon  *daemon.Daemon
	sources map[payment.Network]chains.Source
	prices  map[string]string
	book    *rates.Book
	log     *slog.Logger
	pages   *checkout.Links
	pools   map[payment.Network]*endpoints.Pool
	// premigrate runs on the new, empty database before the migrations
	// (BeforeMigrate).
	premigrate func(url string)
	// stop stops the running service and closes its daemon (a restart
	// stops the one it replaces: a long simulator run does not keep every
	// daemon it made).
	stop func()
}

// Option adjusts an Env before it starts: its Config, or a real Source for
// a network (WithSource).
type Option func(*Env)

// WithConfig adjusts the config before the Env starts.
func WithConfig(f func(*config.Config)) Option { return func(e *Env) { f(e.Config) } }

// WithSource scans network n from src (a real node client) instead of a
// scripted chain. e.Chains[n] is then nil.
func WithSource(n payment.Network, src chains.Source) Option {
	return func(e *Env) { e.sources[n] = src }
}

// WithPool reports network n's source as sending through pool, as serve
// does for a network that lists endpoints: /v1/status, the console and
// the metrics show its endpoints.
func WithPool(n payment.Network, pool *endpoints.Pool) Option {
	return func(e *Env) {
		if e.pools == nil {
			e.pools = map[payment.Network]*endpoints.Pool{}
		}
		e.pools[n] = pool
	}
}

// WithLog gives the Service, finance, reports and the sink their log
// (discarded by default).
func WithLog(log *slog.Logger) Option {
	return func(e *Env) { e.log = log }
}

// BeforeMigrate runs f on the Env's new, empty database before the Env
// applies the migrations: a test of an old database's migration fills it
// at an older schema there.
func BeforeMigrate(f func(url string)) Option { return func(e *Env) { e.premigrate = f } }

// WithPages gives intents the links of their hosted payment page
// (checkout.Links), as serve does when checkout.enabled.
func WithPages(p *checkout.Links) Option {
	return func(e *Env) { e.pages = p }
}

// WithQuotes replaces the static prices (symbol → USD) the Env quotes; a
// symbol left out has no rate at all.
func WithQuotes(prices map[string]string) Option {
	return func(e *Env) { e.prices = prices }
}

// Only enables just the given networks (and their methods).
func Only(networks ...payment.Network) Option {
	return func(e *Env) {
		keep := map[payment.Network]bool{}
		for _, n := range networks {
			keep[n] = true
		}
		for _, n := range payment.Networks {
			e.Config.Networks[n].Enabled = keep[n]
		}
		for _, m := range payment.Methods {
			e.Config.Methods[m.Method].Enabled = keep[m.Network]
		}
	}
}

type watchSets map[payment.Network]*chains.WatchSet

func (w watchSets) Watch(n payment.Network, keys ...[]byte) {
	if s := w[n]; s != nil {
		s.Add(keys...)
	}
}

// New starts an Env with every method enabled on regtest-style fake chains.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	ctx := context.Background()
	url := devnettest.Database(t)
	cfg := config.Default()
	cfg.DatabaseURL = url
	cfg.Instance = "test"
	cfg.Rates.Sources = []string{"static"}
	cfg.Rates.MinSources = 1 // one static source, explicitly
	cfg.Rates.Static = Prices
	// Tests and benchmarks create at will; a test of the limit sets it.
	cfg.Limits.CreatesPerMinute = 0
	for _, n := range payment.Networks {
		nc := cfg.Networks[n]
		nc.Enabled = true
		nc.Chain = "regtest"
		nc.RPCURL = "http://127.0.0.1:1"
		nc.Gap = 3
		nc.PollInterval = config.Duration{Duration: 10 * time.Millisecond}
		if n != payment.Solana {
			nc.AccountKey = addresses.SandboxKeys[n]
		}
	}
	for _, m := range payment.Methods {
		cfg.Methods[m.Method].Enabled = true
	}
	e := &Env{T: t, Config: cfg, Keys: map[string]string{},
		Chains: map[payment.Network]*chainstest.Fake{}, Scanners: map[payment.Network]*chains.Scanner{},
		Watch: map[payment.Network]*chains.WatchSet{}, sources: map[payment.Network]chains.Source{}}
	for _, o := range opts {
		o(e)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, store.OptionsOf(cfg.Database, nil)) // an option may route it (a proxy)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	if e.premigrate != nil {
		e.premigrate(cfg.DatabaseURL)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	clock := clock.NewFake(time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC))
	prices := Prices
	if e.prices != nil {
		prices = e.prices
	}
	book := rates.NewBook(rates.BookConfig{MaxAge: 24 * 365 * time.Hour, MinSources: 1, Clock: clock}, []rates.Provider{rates.NewStatic(prices)}, []string{"BTC", "LTC", "ETH", "USDT", "USDC", "TRX", "SOL"}, nil)
	book.Refresh(ctx)
	e.Store, e.Clock, e.book = st, clock, book
	for _, n := range payment.Networks {
		nc := cfg.Networks[n]
		if !nc.Enabled || e.sources[n] != nil {
			continue
		}
		f := chainstest.NewFake(clock.Now)
		f.Mine(1)
		if n == payment.Solana || n == payment.Tron {
			f.SetFinal(int(max(0, nc.SafetyDepth)))
		}
		e.Chains[n] = f
	}
	t.Cleanup(func() {
		if e.stop != nil {
			e.stop()
		}
	})
	e.startService()
	if cfg.Networks["solana"].Enabled {
		e.ImportSolanaPool(addresses.SandboxSolanaPool[:10]...)
	}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.API.ServeHTTP(w, r) })
	if _, bench := t.(*testing.B); !bench {
		// Every answer a test gets must be one the OpenAPI document
		// describes; benchmarks measure the API alone.
		h = openapitest.Handler(t, h)
	}
	e.Server = httptest.NewServer(h)
	t.Cleanup(e.Server.Close)
	runAPI(t, e.API)
	for _, scope := range []string{"storefront", "finance", "operator"} {
		plain, _, err := st.CreateAPIKey(ctx, scope+"-key", []string{scope}, clock.Now())
		if err != nil {
			t.Fatalf("api key: %v", err)
		}
		e.Keys[scope] = plain
	}
	plain, _, err := st.CreateAPIKey(ctx, "all-key", []string{"storefront", "finance", "operator"}, clock.Now())
	if err != nil {
		t.Fatalf("api key: %v", err)
	}
	e.Keys["all"] = plain
	for _, n := range payment.Networks {
		if !cfg.Networks[n].Enabled {
			continue
		}
		e.Scanners[n] = e.NewScanner(n, e.source(n))
		e.Sync(n)
	}
	return e
}

// startService builds the Service, finance, reports, the scanners' sink,
// the network status and the API with daemon.New, over the Env's store,
// config, quotes and chains.
func (e *Env) startService() {
	e.T.Helper()
	sources := e.Sources()
	pools := func(src chains.Source) *endpoints.Pool {
		for n, s := range sources {
			if s == src {
				return e.pools[n]
			}
		}
		return nil
	}
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
	d, err := daemon.New(context.Background(), e.Config, daemon.Deps{Log: e.log, Clock: e.Clock, Store: e.Store, Sources: sources,
		Quotes: e.book, Links: e.pages, StatusCache: -1, Pools: pools})
	if err != nil {
		e.T.Fatalf("daemon: %v", err)
	}
	e.Daemon, e.Service, e.Finance, e.Reports, e.Sink, e.Nets, e.API = d, d.Service(), d.Finance(), d.Reports(), d.Sink(), d.Networks(), d.API()
	for _, n := range payment.Networks {
		if set := d.WatchSet(n); set != nil {
			e.Watch[n] = set
		}
	}
	stopService := runService(e.T, e.Service)
	e.stop = func() {
		stopService()
		d.Close()
	}
}

// Sources are what the Env scans its enabled networks from, by network.
func (e *Env) Sources() map[payment.Network]chains.Source {
	out := map[payment.Network]chains.Source{}
	for _, n := range payment.Networks {
		if e.Config.Networks[n].Enabled {
			out[n] = e.source(n)
		}
	}
	return out
}

// source is what network n is scanned from: a real source given by
// WithSource, or its scripted chain.
func (e *Env) source(n payment.Network) chains.Source {
	if src := e.sources[n]; src != nil {
		return src
	}
	return e.Chains[n]
}

// RestartService replaces the Service (with finance, reports and the sink),
// the API behind e.Server and every scanner by new ones over the same
// database and chains, as a restarted process (all state is in the
// database; the watched sets are reloaded by the new scanners). The
// replaced Service stops and its daemon closes, as the process it stands
// for would have.
func (e *Env) RestartService() {
	e.T.Helper()
	e.startService()
	for n := range e.Scanners {
		e.Scanners[n] = e.NewScanner(n, e.source(n))
	}
}

// NewScanner returns a scanner of network n over src writing to the Env's
// sink (a restarted scanner is just a new one: all state is in the
// database).
func (e *Env) NewScanner(n payment.Network, src chains.Source) *chains.Scanner {
	nc := e.Config.Networks[n]
	return chains.NewScanner(chains.ScannerConfig{Network: n, Chain: nc.Chain, PollInterval: 10 * time.Millisecond,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight)}, src, e.Sink.ScannerSinks(),
		&ingest.Keys{Store: e.Store}, e.Watch[n], nil)
}

// ImportSolanaPool adds pool keys.
func (e *Env) ImportSolanaPool(keys ...string) {
	e.T.Helper()
	now := e.Clock.Now()
	var rows []store.Address
	for i, k := range keys {
		a, err := addresses.ParseAddress(payment.Solana, "mainnet", k)
		if err != nil {
			e.T.Fatalf("pool key %s: %v", k, err)
		}
		rows = append(rows, store.Address{Network: "solana", Key: a.Key, Address: a.String, Source: "pool", Index: -1,
			CreatedAt: now.Add(time.Duration(i) * time.Microsecond)})
	}
	err := e.Store.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.AddAddresses(context.Background(), rows)
		return err
	})
	if err != nil {
		e.T.Fatalf("import pool: %v", err)
	}
}

// Sync runs network n's scanner until it is caught up with its chain.
func (e *Env) Sync(n payment.Network) {
	e.T.Helper()
	sc := e.Scanners[n]
	for i := 0; i < 1000; i++ {
		caughtUp, err := sc.Step(context.Background())
		if err != nil {
			e.T.Fatalf("scan %s: %v", n, err)
		}
		// As Scanner.Run does after every step.
		if err := e.Sink.SetHealth(context.Background(), n, chains.Health{Healthy: true}); err != nil {
			e.T.Fatalf("health %s: %v", n, err)
		}
		if caughtUp {
			return
		}
	}
	e.T.Fatalf("scan %s: not caught up after 1000 steps", n)
}

// Do sends an API request with the key of scope ("" for none) and returns
// the status and body.
func (e *Env) Do(method, path, scope string, body any, headers ...string) (int, []byte) {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if scope != "" {
		req.Header.Set("Authorization", "Bearer "+e.Keys[scope])
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// CreateIntent creates an intent through the API and fails the test unless
// it is 201.
func (e *Env) CreateIntent(kind, reference, account, usd, method string) views.Intent {
	e.T.Helper()
	status, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": kind, "reference": reference, "account": account, "amount_usd": usd, "method": method})
	if status != 201 {
		e.T.Fatalf("create intent: %d %s", status, body)
	}
	var v views.Intent
	if err := json.Unmarshal(body, &v); err != nil {
		e.T.Fatal(err)
	}
	return v
}

// Intent reads an intent through the API.
func (e *Env) Intent(id string) views.Intent {
	e.T.Helper()
	status, body := e.Do("GET", "/v1/intents/"+id, "storefront", nil)
	if status != 200 {
		e.T.Fatalf("get intent: %d %s", status, body)
	}
	var v views.Intent
	if err := json.Unmarshal(body, &v); err != nil {
		e.T.Fatal(err)
	}
	return v
}

// Pay sends amount base units of asset to an intent's address on its
// network's fake chain and mines one block (not yet scanned).
func (e *Env) Pay(v views.Intent, asset payment.Asset, amount *big.Int, label string) chains.Transfer {
	e.T.Helper()
	n := payment.Network(v.Network)
	a, err := addresses.ParseAddress(n, e.Config.Networks[n].Chain, v.Address)
	if err != nil {
		e.T.Fatalf("parse %s: %v", v.Address, err)
	}
	t := e.Chains[n].Send(chainstest.TxID(label), 0, asset, a.Key, v.Address, amount)
	e.Chains[n].Mine(1)
	return t
}

// Units parses a base-unit integer.
func Units(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad units " + s)
	}
	return v
}

// Counts returns the row counts of the tables a request may write, to
// assert that a refused request changed nothing.
func (e *Env) Counts() map[string]int64 {
	e.T.Helper()
	out := map[string]int64{}
	for _, table := range []string{"payables", "intents", "transfers", "events", "ledger_entries", "idempotency_keys", "resolutions"} {
		var n int64
		if err := e.Store.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			e.T.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	var assigned int64
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM addresses a
		WHERE NOT EXISTS (SELECT 1 FROM free_addresses f WHERE f.network = a.network AND f.key = a.key)`).Scan(&assigned); err != nil {
		e.T.Fatal(err)
	}
	out["assigned_addresses"] = assigned
	var counters int64
	if err := e.Store.Pool().QueryRow(context.Background(), "SELECT coalesce(sum(next_index), 0) FROM derivation_counters").Scan(&counters); err != nil {
		e.T.Fatal(err)
	}
	out["derivation_counters"] = counters
	return out
}

// runService runs the Service's address replenishers (as serve does);
// stop ends them and waits for them to stop.
func runService(t testing.TB, s *intents.Service) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service: %v", err)
		}
	}
}

// runAPI runs the API's background reader (as serve does) until the test
// ends, and waits for it to stop.
func runAPI(t testing.TB, a *api.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("api reader: %v", err)
		}
	})
}
