package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/store"
)

// runReconcile checks one network now, against the configured node, and
// prints the report: `paywatch reconcile -config paywatch.yaml -network
// bitcoin [-from H -to H]`. With -request it only asks the running daemon
// for a run (it picks the request up within seconds).
func runReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "paywatch.yaml", "configuration file")
	network := fs.String("network", "", "network to check (bitcoin, litecoin, ethereum, tron, solana)")
	from := fs.Int64("from", -1, "first block of the range (default: the blocks scanned since the last run)")
	to := fs.Int64("to", -1, "last block of the range (default: the scanned height)")
	request := fs.Bool("request", false, "only ask the running daemon for a run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := payment.Network(*network)
	if !n.Valid() {
		return fmt.Errorf("reconcile: -network %q: want one of bitcoin, litecoin, ethereum, tron, solana", *network)
	}
	if (*from < 0) != (*to < 0) || (*from >= 0 && *to < *from) {
		return errors.New("reconcile: give both -from and -to, with from <= to, or neither")
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	nc := cfg.Networks[n]
	if nc == nil || !nc.Enabled {
		return fmt.Errorf("reconcile: networks.%s is not enabled in %s", n, *cfgPath)
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if *request {
		if err := st.RequestReconcile(ctx, string(n), time.Now().UTC()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "reconcile of %s requested; the daemon runs it within seconds\n", n)
		return nil
	}
	log := newLogger(stderr, cfg.LogLevel)
	src, _, err := nodes.New(ctx, cfg, n, nil, log)
	if err != nil {
		return fmt.Errorf("networks.%s: %w", n, err)
	}
	watch := chains.NewWatchSet(1024)
	if _, err := st.WatchedKeysSince(ctx, string(n), 0, func(key []byte) { watch.Add(append([]byte(nil), key...)) }); err != nil {
		return err
	}
	r, err := reconcile.New(st, daemon.ReconcileConfig(cfg.Reconcile),
		daemon.ReconcileViews(map[payment.Network]chains.Source{n: src}, map[payment.Network]*chains.WatchSet{n: watch}), log)
	if err != nil {
		return err
	}
	var rep reconcile.Report
	if *from >= 0 {
		rep, err = r.RunRange(ctx, n, *from, *to)
	} else {
		rep, err = r.RunOnce(ctx, n)
	}
	if err != nil {
		return err
	}
	return printReport(stdout, rep)
}

func printReport(w io.Writer, rep reconcile.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	findings := rep.Findings
	if findings == nil {
		findings = []store.Finding{}
	}
	return enc.Encode(map[string]any{"network": rep.Network, "from": rep.From, "to": rep.To, "blocks": rep.Blocks,
		"addresses": rep.Addresses, "node_calls": rep.Calls, "skipped": rep.Skipped, "findings": findings, "rechecked": rep.Rechecked})
}
