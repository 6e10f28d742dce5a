package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// newSource builds the chain client of network n; mode, when not nil,
// reports a mode string for the status endpoint.
func newSource(ctx context.Context, cfg *config.Config, n payment.Network, log *slog.Logger) (chains.Source, func() string, error) {
	nc := cfg.Networks[string(n)]
	switch n {
	case payment.Bitcoin, payment.Litecoin:
		c, err := bitcoin.New(bitcoin.Config{Network: n, Chain: nc.Chain, URL: nc.RPCURL, Log: log})
		return c, nil, err
	case payment.Tron:
		key := ""
		if nc.APIKeyEnv != "" {
			key = os.Getenv(nc.APIKeyEnv)
		}
		c, err := tron.New(tron.Config{URL: nc.RPCURL, APIKey: key, USDTContract: cfg.Methods[string(payment.USDTTRC20)].Contract, Log: log})
		return c, nil, err
	}
	return newSourceMore(ctx, cfg, n, log)
}

// newSourceMore builds the sources whose packages are wired separately.
func newSourceMore(ctx context.Context, cfg *config.Config, n payment.Network, log *slog.Logger) (chains.Source, func() string, error) {
	return nil, nil, fmt.Errorf("%s scanning is not available in this build", n)
}
