package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
)

// runServe runs the daemon the config describes until ctx ends.
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
	d, err := newDaemon(ctx, cfg, newLogger(stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Run(ctx, nil)
}

// newDaemon builds the daemon of cfg over the node clients it names.
func newDaemon(ctx context.Context, cfg *config.Config, log *slog.Logger) (*daemon.Daemon, error) {
	return daemon.New(ctx, cfg, daemon.Deps{Log: log, Nodes: nodes.New, Pools: nodes.Pool})
}
