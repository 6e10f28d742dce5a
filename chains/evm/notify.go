package evm

import (
	"bytes"
	"context"
	"log/slog"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// Notify subscribes to newHeads and newPendingTransactions over a websocket
// and wakes on each (wsFeed). A node that refuses pending transactions still
// wakes on heads. A URL that cannot be a websocket, or a node without
// eth_subscribe, is chains.ErrNotifyUnsupported; a failed dial or a dropped
// connection is a lost subscription, which the caller retries (the node may
// come back).
func (c *Client) Notify(ctx context.Context, wake func()) error {
	return wsFeed(c.notifyURL, c.log.With("network", string(payment.Ethereum))).Notify(ctx, wake)
}

// wsFeed is eth_subscribe's newHeads (required) and newPendingTransactions
// (optional) on url: a head (an object) or a pending transaction (a hash, or
// an object) of one of the two subscriptions wakes, named as subscribed.
func wsFeed(url string, log *slog.Logger) chains.WSFeed {
	kinds := []string{"newHeads", "newPendingTransactions"}
	return chains.WSFeed{
		Name: "ethereum",
		URL:  url,
		Subscribe: []chains.WSSubscribe{
			{Method: "eth_subscribe", Params: []any{kinds[0]}},
			{Method: "eth_subscribe", Params: []any{kinds[1]}, Optional: true},
		},
		Parse: func(n chains.WSNotification) string {
			if n.Method != "eth_subscription" || n.Sub < 0 || n.Sub >= len(kinds) {
				return ""
			}
			r := bytes.TrimSpace(n.Result)
			if len(r) == 0 || (r[0] != '{' && (n.Sub == 0 || r[0] != '"')) {
				return ""
			}
			return kinds[n.Sub]
		},
		Log: log,
	}
}
