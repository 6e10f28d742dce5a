package main

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
)

// node is one real regtest node with a funded wallet: it broadcasts a
// payment without mining it, and mines one block.
type node interface {
	rpcURL() string
	// broadcast sends units to address; it returns once the node accepted
	// the transaction.
	broadcast(ctx context.Context, address string, units *big.Int) error
	// mine mines one block.
	mine(ctx context.Context) error
	stop()
}

func startNode(ctx context.Context, n payment.Network, dir string) (node, error) {
	switch n {
	case payment.Bitcoin:
		b, err := devnet.StartBtcd(ctx, dir, 0)
		if err != nil {
			return nil, err
		}
		return btcdNode{b}, nil
	case payment.Litecoin:
		l, err := devnet.StartLitecoind(ctx, dir, 0, false)
		if err != nil {
			return nil, err
		}
		miner, err := l.NewAddress(ctx, "")
		if err != nil {
			l.Stop()
			return nil, err
		}
		return litecoindNode{l, miner}, nil
	case payment.Ethereum:
		bin, err := ethdev.FindAnvil()
		if err != nil {
			return nil, err
		}
		a, err := ethdev.StartAnvil(ctx, bin, dir, 0)
		if err != nil {
			return nil, err
		}
		return anvilNode{a}, nil
	}
	return nil, fmt.Errorf("no node for %s", n)
}

// btcdNode pays from devnet's faucet (sendrawtransaction) and mines with
// generate.
type btcdNode struct{ b *devnet.Btcd }

func (b btcdNode) rpcURL() string { return b.b.RPCURL }
func (b btcdNode) stop()          { b.b.Stop() }

func (b btcdNode) broadcast(ctx context.Context, address string, units *big.Int) error {
	a, err := addresses.ParseAddress(payment.Bitcoin, "regtest", address)
	if err != nil {
		return err
	}
	if !units.IsInt64() {
		return errors.New("amount out of range")
	}
	_, err = b.b.Pay(ctx, a.Key, units.Int64())
	return err
}

func (b btcdNode) mine(ctx context.Context) error {
	_, err := b.b.Generate(ctx, 1)
	return err
}

// litecoindNode pays from the node's wallet (sendtoaddress) and mines with
// generatetoaddress.
type litecoindNode struct {
	l     *devnet.Litecoind
	miner string
}

func (l litecoindNode) rpcURL() string { return l.l.RPCURL }
func (l litecoindNode) stop()          { l.l.Stop() }

func (l litecoindNode) broadcast(ctx context.Context, address string, units *big.Int) error {
	if !units.IsInt64() {
		return errors.New("amount out of range")
	}
	_, err := l.l.SendToAddress(ctx, address, units.Int64())
	return err
}

func (l litecoindNode) mine(ctx context.Context) error {
	return l.l.Call(ctx, "generatetoaddress", nil, 1, l.miner)
}

// anvilNode pays from anvil's first dev account (eth_sendTransaction;
// anvil mines it into a block at once) and mines with anvil_mine.
type anvilNode struct{ a *ethdev.Anvil }

func (a anvilNode) rpcURL() string { return a.a.RPCURL }
func (a anvilNode) stop()          { a.a.Stop() }

func (a anvilNode) broadcast(ctx context.Context, address string, units *big.Int) error {
	if !common.IsHexAddress(address) {
		return fmt.Errorf("%q is not an Ethereum address", address)
	}
	to := common.HexToAddress(address)
	var hash common.Hash
	return a.a.RPC.CallContext(ctx, &hash, "eth_sendTransaction",
		map[string]any{"from": ethdev.AnvilDevAccount, "to": to, "value": (*hexutil.Big)(units)})
}

func (a anvilNode) mine(ctx context.Context) error { return a.a.Mine(ctx, 1) }
