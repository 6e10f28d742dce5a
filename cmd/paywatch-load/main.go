package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "paywatch-load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("paywatch-load", flag.ContinueOnError)
	n := fs.Int("n", 1_000_000, "watched addresses to insert")
	bin := fs.String("bin", "bin/paywatch", "the paywatch binary to start (several, comma-separated: each in turn on the same rows)")
	dbURL := fs.String("database", "", "PostgreSQL URL of an empty database (default: a throwaway cluster)")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	setOnly := fs.Bool("set-only", false, "measure only the watched set, in this process, without a database")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *setOnly {
		return measureSet(out, *n)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *dbURL == "" {
		dir, err := os.MkdirTemp("", "paywatch-load-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		pg, err := devnet.StartPostgres(ctx, dir, 0)
		if err != nil {
			return err
		}
		defer pg.Stop()
		*dbURL = pg.URL("postgres")
	}
	st, err := store.Open(ctx, *dbURL)
	if err != nil {
		return err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return err
	}
	began := time.Now()
	err = insert(ctx, st, *n)
	st.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "inserted %d addresses in %s\n", *n, time.Since(began).Round(time.Millisecond))
	for _, b := range strings.Split(*bin, ",") {
		fmt.Fprintf(out, "%s: ", b)
		if err := measure(ctx, out, b, *dbURL, *n); err != nil {
			return err
		}
	}
	return nil
}

// insert adds n P2WPKH scripts to addresses, generated inside PostgreSQL, a
// million rows per statement. Row i's script is 0x0014, i as 8 big-endian
// bytes, then 12 bytes of a hash of i, and its address 'load-' and i padded
// to 12 digits: each statement appends to the end of every index instead of
// writing at random places in indexes of millions of entries (random keys
// took 8m50s for ten million rows, most of it in the primary key). The set
// hashes every byte of a key, so keys in order fill it like any others.
func insert(ctx context.Context, st *store.Store, n int) error {
	at := time.Now().Add(-time.Hour).UTC()
	for done := 0; done < n; {
		chunk := min(n-done, 1_000_000)
		if _, err := st.Pool().Exec(ctx, `INSERT INTO addresses (network, key, address, source, created_at)
			SELECT $1, '\x0014'::bytea || int8send(i) || substring(sha256(int8send(i)) FROM 1 FOR 12),
				'load-' || lpad(i::text, 12, '0'), 'load', $2
			FROM generate_series($3::bigint, $4::bigint) AS i`, string(payment.Bitcoin), at, done, done+chunk-1); err != nil {
			return fmt.Errorf("insert addresses: %w", err)
		}
		done += chunk
		fmt.Fprintf(os.Stderr, "inserted %d rows at %s\n", done, time.Now().Format(time.TimeOnly))
	}
	// They stand for addresses handed out long ago: none is free (the
	// database was empty, so the queue holds only these).
	if _, err := st.Pool().Exec(ctx, "TRUNCATE free_addresses"); err != nil {
		return fmt.Errorf("hand the addresses out: %w", err)
	}
	_, err := st.Pool().Exec(ctx, "VACUUM ANALYZE addresses")
	return err
}

// measure starts the daemon and reports when its watched set is loaded.
func measure(ctx context.Context, out io.Writer, bin, dbURL string, n int) error {
	port, err := devnet.FreePort()
	if err != nil {
		return err
	}
	nodePort, err := devnet.FreePort() // nothing listens there: no node is needed
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "paywatch-load-cfg-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "paywatch.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:%d
database_url: %q
instance: load
log_level: error
rates: {sources: [static], min_sources: 1, static: {BTC: "60000"}, refresh: "@every 1m"}
methods:
  BTC: {enabled: true}
networks:
  bitcoin: {enabled: true, chain: regtest, rpc_url: "http://load:load@127.0.0.1:%d", account_key: %q, poll_interval: 10s}
`, port, dbURL, nodePort, addresses.SandboxKeys[payment.Bitcoin])
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--config", cfg)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		loaded, err := gauge(ctx, url, `paywatch_watched_keys_loaded{network="bitcoin"}`)
		if err == nil && loaded >= float64(n) {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("the daemon exited before its watched set was loaded: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("waiting for the watched set (last: %v, %v): %w", loaded, err, ctx.Err())
		case <-tick.C:
		}
	}
	took := time.Since(began)
	rss, peak, err := memory(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "keys %d  load %s (process start to set loaded)  rss %d MB  peak rss %d MB\n",
		n, took.Round(time.Millisecond), rss>>10, peak>>10)
	return nil
}

// measureSet fills a watched set with n random 22-byte scripts in this
// process and reports its resident memory and single-goroutine lookup rate
// (hits and misses alternating).
func measureSet(out io.Writer, n int) error {
	_, before, err := memory(os.Getpid())
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, 2))
	set := chains.NewWatchSet(n)
	key := make([]byte, 22)
	key[1] = 0x14
	fill := func(k []byte, i int) {
		binary.LittleEndian.PutUint64(k[2:], r.Uint64())
		binary.LittleEndian.PutUint64(k[10:], r.Uint64())
		binary.LittleEndian.PutUint32(k[18:], uint32(i))
	}
	began := time.Now()
	probes := make([][]byte, 0, 1<<16)
	for i := range n {
		fill(key, i)
		set.Add(key)
		if i%(n/(1<<15)+1) == 0 && len(probes) < 1<<15 {
			probes = append(probes, append([]byte(nil), key...))
			miss := append([]byte(nil), key...)
			miss[21] ^= 0xff
			probes = append(probes, miss)
		}
	}
	filled := time.Since(began)
	runtime.GC()
	rss, _, err := memory(os.Getpid())
	if err != nil {
		return err
	}
	// On a shared machine wall time mostly measures waiting for a core; the
	// thread's own CPU time is what one core does.
	const lookups = 20_000_000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, err := threadCPU()
	if err != nil {
		return err
	}
	hits := 0
	began = time.Now()
	for i := range lookups {
		if set.Contains(probes[i%len(probes)]) {
			hits++
		}
	}
	took := time.Since(began)
	cpu1, err := threadCPU()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "keys %d  filled in %s  set rss %d MB (process %d MB, %d MB before)\n",
		set.Len(), filled.Round(time.Millisecond), (rss-before)>>10, rss>>10, before>>10)
	fmt.Fprintf(out, "lookups (half hits): %.0f per CPU-second of one core, %.0f per wall second (%d hits of %d)\n",
		lookups/(cpu1-cpu0).Seconds(), lookups/took.Seconds(), hits, lookups)

	// The same probes in batches of 64, as a block's outputs are looked up.
	const batch = 64
	found := make([]bool, batch)
	hits = 0
	if cpu0, err = threadCPU(); err != nil {
		return err
	}
	began = time.Now()
	for from, done := 0, 0; done < lookups; {
		n := min(batch, len(probes)-from)
		set.ContainsBatch(probes[from:from+n], found)
		for _, ok := range found[:n] {
			if ok {
				hits++
			}
		}
		if done, from = done+n, from+n; from == len(probes) {
			from = 0
		}
	}
	took = time.Since(began)
	if cpu1, err = threadCPU(); err != nil {
		return err
	}
	fmt.Fprintf(out, "batch lookups (half hits, %d a call): %.0f per CPU-second of one core, %.0f per wall second (%d hits of %d)\n",
		batch, lookups/(cpu1-cpu0).Seconds(), lookups/took.Seconds(), hits, lookups)
	return nil
}

// threadCPU is the calling OS thread's CPU time (user and system).
func threadCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// gauge scrapes one sample from a Prometheus text page.
func gauge(ctx context.Context, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("%s not in %s", name, url)
}

// memory returns VmRSS and VmHWM (peak) of pid in KiB.
func memory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			peak = v
		}
	}
	return rss, peak, nil
}
