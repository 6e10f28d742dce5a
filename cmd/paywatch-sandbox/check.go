package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
)

// checkSource returns a client of network n's sandbox node, to read the
// identity of a block only: for Ethereum, Tron and Solana the client types
// the daemon scans with; for Bitcoin and Litecoin the node's getblockhash,
// which is the hash the daemon's client stores (it refuses a block hashing
// to anything else), so hashes compare byte for byte with the stored
// cursor. The Bitcoin client is not used: it links ltcd's cgo secp256k1,
// and this binary links go-ethereum's (devnet's anvil), which clash. No token or call
// tracing is set (anvil cannot trace blocks whose state it
// did not keep across a restart).
func checkSource(ctx context.Context, cfg *config.Config, n payment.Network, log *slog.Logger) (chains.Source, error) {
	nc := cfg.Networks[n]
	// The node itself, never the faulty proxy in front of it.
	node := configNodeURL(nc)
	switch n {
	case payment.Bitcoin, payment.Litecoin:
		return coreBlocks{devnet.CoreRPC{RPCURL: node}}, nil
	case payment.Ethereum:
		return evm.New(ctx, evm.Config{URL: node, Trace: "off", Log: log})
	case payment.Tron:
		return tron.New(tron.Config{URL: node, USDTContract: cfg.Methods[payment.USDTTRC20].Contract, Log: log})
	case payment.Solana:
		c, err := solana.New(solana.Config{URL: node, Mode: nc.Mode, Log: log})
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

// coreBlocks reads block identities from a Bitcoin Core-style RPC node.
type coreBlocks struct{ rpc devnet.CoreRPC }

var _ chains.Source = coreBlocks{}

func (c coreBlocks) Tip(ctx context.Context) (chains.Height, error) {
	n, err := c.rpc.Tip(ctx)
	return chains.Height(n), err
}

func (coreBlocks) FinalizedHeight(context.Context) (chains.Height, error) { return 0, nil }

// Block returns the identity of the block at height only (no transfers); a
// height above the tip is chains.ErrBlockNotFound.
func (c coreBlocks) Block(ctx context.Context, height chains.Height, _ chains.Watched) (chains.Block, error) {
	hash, err := c.rpc.BlockHash(ctx, int64(height))
	var re *devnet.RPCError
	if errors.As(err, &re) && strings.Contains(strings.ToLower(re.Message), "out of range") {
		return chains.Block{}, fmt.Errorf("%w: %v", chains.ErrBlockNotFound, err)
	}
	if err != nil {
		return chains.Block{}, err
	}
	return chains.Block{BlockRef: chains.BlockRef{Height: height, Hash: hash}}, nil
}
