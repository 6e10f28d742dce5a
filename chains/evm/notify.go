package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paywatch/paywatch/chains"
)

var _ chains.Notifier = (*Client)(nil)

// notifyURL is the websocket endpoint Notify dials (see Config.NotifyURL).
func notifyURL(cfg Config) string {
	if cfg.NotifyURL != "" {
		return cfg.NotifyURL
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return ""
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return ""
	}
	return u.String()
}

// Notify subscribes to newHeads and newPendingTransactions over a websocket
// and wakes on each. A node that refuses pending transactions still wakes on
// heads. A URL that cannot be a websocket, or a node without eth_subscribe,
// is chains.ErrNotifyUnsupported; a failed dial or a dropped connection is a
// lost subscription, which the caller retries (the node may come back).
func (c *Client) Notify(ctx context.Context, wake func()) error {
	if c.notifyURL == "" {
		return fmt.Errorf("ethereum: %w: no websocket URL", chains.ErrNotifyUnsupported)
	}
	ws, err := rpc.DialContext(ctx, c.notifyURL)
	if err != nil {
		return fmt.Errorf("ethereum: dial websocket: %w", err)
	}
	defer ws.Close()
	heads := make(chan json.RawMessage, 16)
	hsub, err := ws.EthSubscribe(ctx, heads, "newHeads")
	if err != nil {
		var rerr rpc.Error
		if errors.As(err, &rerr) && rerr.ErrorCode() == -32601 {
			return fmt.Errorf("ethereum: %w: %v", chains.ErrNotifyUnsupported, err)
		}
		return fmt.Errorf("ethereum: subscribe newHeads: %w", err)
	}
	defer hsub.Unsubscribe()
	txs := make(chan json.RawMessage, 64)
	var txErr <-chan error
	if tsub, err := ws.EthSubscribe(ctx, txs, "newPendingTransactions"); err == nil {
		defer tsub.Unsubscribe()
		txErr = tsub.Err()
	} else {
		c.log.Info("node refuses pending-transaction notifications; waking on blocks only", "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-heads:
			wake()
		case <-txs:
			wake()
		case err := <-hsub.Err():
			return fmt.Errorf("ethereum: newHeads subscription lost: %w", err)
		case err := <-txErr:
			return fmt.Errorf("ethereum: newPendingTransactions subscription lost: %w", err)
		}
	}
}
