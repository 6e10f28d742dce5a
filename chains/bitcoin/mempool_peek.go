package bitcoin

import (
	"context"
	"errors"
	"time"

	"github.com/paywatch/paywatch/chains"
)

// mempoolPeekEvery is how often Notify asks a Bitcoin Core or Litecoin Core
// node without ZMQ how big its mempool is. Such a node pushes nothing about
// its mempool (waitfornewblock is about blocks only), so without the peek a
// broadcast would wait for the scanner's poll (10 s for Bitcoin by
// default); getbestblockhash and getmempoolinfo are two small answers
// whatever the mempool holds, asked in one HTTP request (a JSON-RPC
// batch). A broadcast waits for the next peek, up to the whole interval:
// at 150 ms the p95 of broadcast → detected is about 140 ms of waiting
// plus the scan, within issue 37's 250 ms, and the node answers under
// seven requests a second (the 250 ms peek of two requests made eight).
const mempoolPeekEvery = 150 * time.Millisecond

// mempoolShape is what getmempoolinfo says that moves when a transaction
// enters or leaves the mempool.
type mempoolShape struct {
	Size  int64 `json:"size"`
	Bytes int64 `json:"bytes"`
	Usage int64 `json:"usage"`
}

// peekState is one peek: the best block and the mempool's shape. The best
// block is part of it because a block can take a transaction out of the
// mempool and a new one of the same size come in between two peeks (a
// wallet's payments often are): the shape alone would not move.
type peekState struct {
	tip   string
	shape mempoolShape
}

// peek reads the node's best block, then its mempool's shape, in one
// request: the node answers a batch's calls in order.
func (c *Client) peek(ctx context.Context) (peekState, error) {
	var p peekState
	err := c.rpc.callBatch(ctx, []batchCall{{Method: "getbestblockhash", Out: &p.tip}, {Method: "getmempoolinfo", Out: &p.shape}})
	return p, err
}

// peekMempool wakes whenever the node's best block or mempool shape
// changes, until ctx ends or stop is called; stop waits for it and may be
// called twice. A change that keeps both (one transaction replaced by
// another of the same size within a block interval) is found by the
// scanner's poll, as before: the peek only makes the common case early. Failed peeks are left to the long-poll beside it,
// which fails on the same unreachable node and ends Notify.
func (c *Client) peekMempool(ctx context.Context, wake func()) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(mempoolPeekEvery)
		defer tick.Stop()
		var last peekState
		known := false
		for {
			now, err := c.peek(ctx)
			var re *RPCError
			switch {
			case ctx.Err() != nil:
				return
			case errors.As(err, &re) && re.Code == codeMethodNotFound:
				return
			case err != nil:
				c.log.Debug("mempool peek failed", "err", chains.RedactError(err))
			case !known:
				last, known = now, true
			case now != last:
				last = now
				wake()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
