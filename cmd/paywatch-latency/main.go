package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "paywatch-latency:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	bin       string
	n         int
	warmup    int
	networks  []payment.Network
	pollEvery time.Duration
	keep      bool
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("paywatch-latency", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.bin, "bin", "bin/paywatch", "the paywatch binary to run")
	fs.IntVar(&o.n, "n", 30, "samples per network and figure")
	fs.IntVar(&o.warmup, "warmup", 2, "unrecorded samples per network first (subscriptions settle)")
	nets := fs.String("networks", "bitcoin,litecoin,ethereum", "networks to measure (bitcoin: btcd, litecoin: litecoind, ethereum: anvil)")
	fs.DurationVar(&o.pollEvery, "poll-every", 10*time.Millisecond, "how often GET /v1/intents/{id} is polled for a new confirmation count")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (node and daemon logs)")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, name := range strings.Split(*nets, ",") {
		n := payment.Network(strings.TrimSpace(name))
		switch n {
		case payment.Bitcoin, payment.Litecoin, payment.Ethereum:
			o.networks = append(o.networks, n)
		default:
			return fmt.Errorf("-networks: %q is not bitcoin, litecoin or ethereum", name)
		}
	}
	if o.n < 1 || o.pollEvery <= 0 {
		return errors.New("-n and -poll-every must be positive")
	}
	if _, err := os.Stat(o.bin); err != nil {
		return fmt.Errorf("-bin: %w (go build -o bin/paywatch ./cmd/paywatch)", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "paywatch-latency-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "logs under", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	return measureAll(ctx, out, dir, o)
}

// measureAll starts PostgreSQL, the nodes and the daemon, then samples
// network after network.
func measureAll(ctx context.Context, out io.Writer, dir string, o options) error {
	load0 := loadAverage()
	// The cluster runs as the postgres user when this runs as root, so it
	// gets a directory of its own rather than one under dir (mode 0700).
	pgDir, err := os.MkdirTemp("", "paywatch-latency-pg-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(pgDir)
	pg, err := devnet.StartPostgres(ctx, pgDir, 0)
	if err != nil {
		return err
	}
	defer pg.Stop()
	dbURL := pg.URL("postgres")
	key, err := prepareDatabase(ctx, dbURL)
	if err != nil {
		return err
	}
	nodes := map[payment.Network]node{}
	defer func() {
		for _, nd := range nodes {
			nd.stop()
		}
	}()
	for _, n := range o.networks {
		progress("starting the %s node", n)
		nd, err := startNode(ctx, n, filepath.Join(dir, string(n)))
		if err != nil {
			return fmt.Errorf("%s node: %w", n, err)
		}
		nodes[n] = nd
	}
	d, err := startDaemon(ctx, o.bin, dir, dbURL, nodes)
	if err != nil {
		return err
	}
	defer d.stop()
	c := &apiClient{base: d.url, key: key}
	if err := c.waitListening(ctx, d.exited); err != nil {
		return fmt.Errorf("%w\ndaemon log:\n%s", err, d.logTail())
	}
	feed := newDetections()
	fctx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	feedDone := make(chan error, 1)
	go func() { feedDone <- feed.follow(fctx, c) }()

	var results []result
	for _, n := range o.networks {
		progress("sampling %s (%d warm-up, %d samples)", n, o.warmup, o.n)
		r, err := sample(ctx, c, feed, nodes[n], n, o)
		if err != nil {
			select {
			case ferr := <-feedDone:
				err = fmt.Errorf("%w (event feed: %v)", err, ferr)
			default:
			}
			return fmt.Errorf("%s: %w\ndaemon log:\n%s", n, err, d.logTail())
		}
		results = append(results, r...)
	}
	load1 := loadAverage()
	report(out, results, load0, load1, d.wakeLines())
	return nil
}

// prepareDatabase migrates the database and creates a storefront API key.
func prepareDatabase(ctx context.Context, dbURL string) (string, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return "", err
	}
	plain, _, err := st.CreateAPIKey(ctx, "latency", []string{"storefront"}, time.Now().UTC())
	return plain, err
}

// daemon is the running paywatch binary.
type daemon struct {
	url    string
	log    string
	cmd    *exec.Cmd
	exited chan error
}

// latencyConfig leaves every poll interval at its default. Confirmations
// are set out of reach so that an intent stays detected while its transfer
// counts confirmations.
const latencyConfig = `listen: 127.0.0.1:%d
database_url: %q
instance: latency
log_level: info
console: {enabled: false}
rates: {sources: [static], min_sources: 1, static: {BTC: "60000", LTC: "80", ETH: "3000"}, refresh: "@every 1m"}
methods:
%snetworks:
%s`

func startDaemon(ctx context.Context, bin, dir, dbURL string, nodes map[payment.Network]node) (*daemon, error) {
	port, err := devnet.FreePort()
	if err != nil {
		return nil, err
	}
	var methods, networks strings.Builder
	for _, n := range payment.Networks {
		nd, ok := nodes[n]
		if !ok {
			continue
		}
		fmt.Fprintf(&methods, "  %s: {enabled: true, confirmations: 1000}\n", nativeMethod(n))
		// regtest: static rates and the sandbox keys are refused on mainnet.
		fmt.Fprintf(&networks, "  %s: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q}\n",
			n, nd.rpcURL(), addresses.SandboxKeys[n])
	}
	y := fmt.Sprintf(latencyConfig, port, dbURL, methods.String(), networks.String())
	if _, err := config.Parse(strings.NewReader(y), func(string) string { return "" }); err != nil {
		return nil, fmt.Errorf("latency config: %w", err)
	}
	cfg := filepath.Join(dir, "paywatch.yaml")
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		return nil, err
	}
	d := &daemon{url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, "paywatch.log"), exited: make(chan error, 1)}
	logf, err := os.Create(d.log)
	if err != nil {
		return nil, err
	}
	d.cmd = exec.Command(bin, "serve", "--config", cfg)
	// The file is the whole configuration: no PAYWATCH_* override.
	d.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() {
		d.exited <- d.cmd.Wait()
		logf.Close()
	}()
	progress("daemon started (poll intervals at their defaults)")
	return d, nil
}

func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

func (d *daemon) logTail() string {
	b, _ := os.ReadFile(d.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// wakeLines are the daemon's log lines about node notifications (which
// wake path each network got, and any loss).
func (d *daemon) wakeLines() []string {
	f, err := os.Open(d.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications") {
			out = append(out, sc.Text())
		}
	}
	return out
}

func nativeMethod(n payment.Network) payment.Method {
	switch n {
	case payment.Bitcoin:
		return payment.BTC
	case payment.Litecoin:
		return payment.LTC
	}
	return payment.ETH
}

// pause waits a random time below one second, so that samples do not lock
// to the phase of a poll timer.
func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(rand.N(time.Second)):
		return nil
	}
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
}

// loadAverage is the 1-, 5- and 15-minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
