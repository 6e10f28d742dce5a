package bitcoin

import (
	"context"
	"errors"
	"fmt"

	"github.com/paywatch/paywatch/chains"
)

var _ chains.Notifier = (*Client)(nil)

// longPollMillis is how long one waitfornewblock waits before answering
// with the unchanged tip; it stays under the HTTP client's timeout.
const longPollMillis = 30_000

// codeMethodNotFound is JSON-RPC's "Method not found" (btcd for
// waitfornewblock).
const codeMethodNotFound = -32601

// Notify wakes on the node's changes. With Config.ZMQURL it subscribes to
// the node's ZMQ publisher (notifyZMQ). Otherwise Bitcoin Core and Litecoin
// Core are long-polled with waitfornewblock (one RPC thread of the node
// waits) and wake whenever the best block changes, and are peeked at
// (getbestblockhash, getmempoolinfo) every mempoolPeekEvery for their
// mempool (peekMempool). btcd, which answers waitfornewblock with "Method
// not found", is subscribed on its websocket to new blocks and new mempool
// transactions (wsFeed), unless the client sends through an endpoint pool
// (Config.Pooled): then it is polled.
func (c *Client) Notify(ctx context.Context, wake func()) error {
	if c.zmqURL != "" {
		return c.notifyZMQ(ctx, wake)
	}
	stopPeek := c.peekMempool(ctx, wake)
	defer stopPeek()
	var last string
	if err := c.rpc.call(ctx, "getbestblockhash", &last); err != nil {
		return fmt.Errorf("%s: notifications: %w", c.network, err)
	}
	for {
		var tip struct {
			Hash string `json:"hash"`
		}
		err := c.rpc.call(ctx, "waitfornewblock", &tip, longPollMillis)
		if ctx.Err() != nil {
			return nil
		}
		var re *RPCError
		if errors.As(err, &re) && re.Code == codeMethodNotFound {
			stopPeek()
			if c.pooled {
				return fmt.Errorf("%w: btcd notifies only on its websocket, which is not used with networks.%s.endpoints", chains.ErrNotifyUnsupported, c.network)
			}
			return c.wsFeed().Notify(ctx, wake)
		}
		if err != nil {
			return fmt.Errorf("%s: waitfornewblock: %w", c.network, err)
		}
		if tip.Hash != last {
			last = tip.Hash
			wake()
		}
	}
}
