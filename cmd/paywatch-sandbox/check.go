package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// checkSource returns a client of network n's sandbox node, to read the
// identity of a block only: the same client types the daemon scans with, so
// hashes compare byte for byte with its stored cursor. No token or call
// tracing is set (anvil cannot trace blocks whose state it
// did not keep across a restart).
func checkSource(ctx context.Context, cfg *config.Config, n payment.Network, log *slog.Logger) (chains.Source, error) {
	nc := cfg.Networks[string(n)]
	switch n {
	case payment.Bitcoin, payment.Litecoin:
		return bitcoin.New(bitcoin.Config{Network: n, Chain: nc.Chain, URL: nc.RPCURL, CookieFile: nc.CookieFile, Log: log})
	case payment.Ethereum:
		return evm.New(ctx, evm.Config{URL: nc.RPCURL, Trace: "off", Log: log})
	case payment.Tron:
		return tron.New(tron.Config{URL: nc.RPCURL, USDTContract: cfg.Methods[string(payment.USDTTRC20)].Contract, Log: log})
	case payment.Solana:
		c, err := solana.New(solana.Config{URL: nc.RPCURL, Mode: nc.Mode, Log: log})
		if err != nil {
			return nil, err
		}
		// As the daemon scans: its tip is the finalized slot.
		return solana.NewModeSource(c), nil
	}
	return nil, fmt.Errorf("%s: no sandbox node", n)
}

// noneWatched watches nothing: only the block's identity is wanted.
type noneWatched struct{}

func (noneWatched) Contains([]byte) bool { return false }
