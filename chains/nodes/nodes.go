package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/ethereum/go-ethereum/common"
	"github.com/paywatch/paywatch/chains"

	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// New builds the node client of network n as its config names it; getenv
// reads the secrets the config names by environment variable (nil is
// os.Getenv). mode, when not nil, reports a mode string for the status
// endpoint. An error names the node's host, never its URL.
func New(ctx context.Context, cfg *config.Config, n payment.Network, getenv func(string) string, log *slog.Logger) (chains.Source, func() string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	src, mode, err := newSourceAny(ctx, cfg, n, getenv, log)
	// A node URL may hold credentials or an API key: errors name its host.
	return src, mode, chains.RedactError(err)
}

func newSourceAny(ctx context.Context, cfg *config.Config, n payment.Network, getenv func(string) string, log *slog.Logger) (chains.Source, func() string, error) {
	nc := cfg.Networks[n]
	switch n {
	case payment.Bitcoin, payment.Litecoin:
		c, err := bitcoin.New(bitcoin.Config{Network: n, Chain: nc.Chain, URL: nc.RPCURL, CookieFile: nc.CookieFile,
			ZMQURL: nc.NotifyURL, Log: log})
		return c, nil, err
	case payment.Tron:
		key := ""
		if nc.APIKeyEnv != "" {
			key = getenv(nc.APIKeyEnv)
		}
		// With the TRX method on, a node that does not write internal
		// transactions (vm.saveInternalTx = false) is refused (VerifyChain).
		c, err := tron.New(tron.Config{URL: nc.RPCURL, APIKey: key, USDTContract: cfg.Methods[payment.USDTTRC20].Contract, Log: log,
			NeedInternalTx: cfg.Methods[payment.TRX].Enabled, InternalTxProbe: nc.InternalTxProbe})
		return c, nil, err
	}
	return newSourceMore(ctx, cfg, n, log)
}

// newSourceMore builds the Ethereum and Solana clients.
func newSourceMore(ctx context.Context, cfg *config.Config, n payment.Network, log *slog.Logger) (chains.Source, func() string, error) {
	nc := cfg.Networks[n]
	switch n {
	case payment.Ethereum:
		var tokens []evm.Token
		for _, m := range []payment.Method{payment.USDTERC20, payment.USDCERC20} {
			mc := cfg.Methods[m]
			if mc.Contract == "" {
				continue
			}
			if !common.IsHexAddress(mc.Contract) {
				return nil, nil, fmt.Errorf("methods.%s.contract: %q is not an Ethereum address", m, mc.Contract)
			}
			tokens = append(tokens, evm.Token{Asset: payment.MustMethod(m).Asset, Contract: common.HexToAddress(mc.Contract)})
		}
		c, err := evm.New(ctx, evm.Config{URL: nc.RPCURL, NotifyURL: nc.NotifyURL, Tokens: tokens, Trace: nc.Trace, Log: log})
		if err != nil {
			return nil, nil, err
		}
		return c, c.TraceMode, nil
	case payment.Solana:
		// networks.solana.mode: block, address, or auto (address mode below
		// solana.DefaultAddressModeMax watched keys); the status shows the
		// mode of the last catch-up.
		c, err := solana.New(solana.Config{URL: nc.RPCURL, NotifyURL: nc.NotifyURL, Mode: nc.Mode, Log: log})
		if err != nil {
			return nil, nil, err
		}
		src := solana.NewModeSource(c)
		return src, src.InUse, nil
	}
	return nil, nil, fmt.Errorf("%s scanning is not available in this build", n)
}
