package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"

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
	src, mode, pool, err := newSourceAny(ctx, cfg, n, getenv, log)
	if err == nil && pool != nil {
		pools.Store(src, pool)
	}
	// A node URL may hold credentials or an API key: errors name its host.
	return src, mode, chains.RedactError(err)
}

func newSourceAny(ctx context.Context, cfg *config.Config, n payment.Network, getenv func(string) string, log *slog.Logger) (chains.Source, func() string, *endpoints.Pool, error) {
	nc := cfg.Networks[n]
	pool, err := newPool(cfg, n, getenv, log)
	if err != nil {
		return nil, nil, nil, err
	}
	switch n {
	case payment.Bitcoin, payment.Litecoin:
		bc := bitcoin.Config{Network: n, Chain: nc.Chain, URL: nc.RPCURL, CookieFile: nc.CookieFile, ZMQURL: nc.NotifyURL, Log: log}
		if pool != nil {
			// The pool sends each endpoint's credentials in place of these.
			bc.URL, bc.HTTPClient = "http://pool:pool@"+strings.TrimPrefix(endpoints.Placeholder, "http://"), pooledClient(pool)
			bc.Pooled = true
		}
		c, err := bitcoin.New(bc)
		if err != nil {
			return nil, nil, nil, err
		}
		if pool != nil {
			runPool(ctx, pool, c, nc)
		}
		return c, nil, pool, nil
	case payment.Tron:
		// With the TRX method on, a node that does not write internal
		// transactions (vm.saveInternalTx = false) is refused (VerifyChain).
		tc := tron.Config{URL: nc.RPCURL, USDTContract: cfg.Methods[payment.USDTTRC20].Contract, Log: log,
			NeedInternalTx: cfg.Methods[payment.TRX].Enabled, InternalTxProbe: nc.InternalTxProbe}
		if nc.APIKeyEnv != "" {
			tc.APIKey = getenv(nc.APIKeyEnv)
		}
		if pool != nil {
			tc.URL, tc.HTTPClient = endpoints.Placeholder, pooledClient(pool)
		}
		c, err := tron.New(tc)
		if err != nil {
			return nil, nil, nil, err
		}
		if pool != nil {
			runPool(ctx, pool, c, nc)
		}
		return c, nil, pool, nil
	}
	src, mode, err := newSourceMore(ctx, cfg, n, pool, log)
	return src, mode, pool, err
}

// newSourceMore builds the Ethereum and Solana clients.
func newSourceMore(ctx context.Context, cfg *config.Config, n payment.Network, pool *endpoints.Pool, log *slog.Logger) (chains.Source, func() string, error) {
	nc := cfg.Networks[n]
	url, notify := nc.RPCURL, nc.NotifyURL
	var hc *http.Client
	if pool != nil {
		url, hc = endpoints.Placeholder, pooledClient(pool)
		notify = chains.NotifyURL(nc.NotifyURL, firstScanURL(nc))
	}
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
		c, err := evm.New(ctx, evm.Config{URL: url, NotifyURL: notify, HTTPClient: hc, Tokens: tokens, Trace: nc.Trace, Log: log})
		if err != nil {
			return nil, nil, err
		}
		if pool != nil {
			runPool(ctx, pool, c, nc)
		}
		return c, c.TraceMode, nil
	case payment.Solana:
		// networks.solana.mode: block, address, or auto (address mode below
		// solana.DefaultAddressModeMax watched keys); the status shows the
		// mode of the last catch-up.
		c, err := solana.New(solana.Config{URL: url, NotifyURL: notify, HTTPClient: hc, Mode: nc.Mode, Log: log})
		if err != nil {
			return nil, nil, err
		}
		if pool != nil {
			runPool(ctx, pool, c, nc)
		}
		src := solana.NewModeSource(c)
		return src, src.InUse, nil
	}
	return nil, nil, fmt.Errorf("%s scanning is not available in this build", n)
}
