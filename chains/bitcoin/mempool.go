package bitcoin

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/paywatch/paywatch/chains"
)

// mempoolFetchers is how many getrawtransaction calls run at once when the
// mempool cache fills up.
const mempoolFetchers = 4

// Pending returns the outputs of mempool transactions that pay a script w
// contains, ordered by (txid, output index). Each mempool transaction is
// fetched and decoded once (getrawmempool, then getrawtransaction <txid> 0
// for ids not seen before); transactions that left the mempool are dropped
// from the cache.
func (c *Client) Pending(ctx context.Context, w chains.Watched) ([]chains.Transfer, error) {
	var ids []string
	if err := c.rpc.call(ctx, "getrawmempool", &ids); err != nil {
		return nil, fmt.Errorf("%s: mempool: %w", c.network, err)
	}
	c.mempoolMu.Lock()
	defer c.mempoolMu.Unlock()

	var missing []string
	for _, id := range ids {
		if _, ok := c.mempool[id]; !ok {
			missing = append(missing, id)
		}
	}
	fetched := make([]mempoolTx, len(missing))
	found := make([]bool, len(missing))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(mempoolFetchers)
	for i, id := range missing {
		g.Go(func() error {
			tx, ok, err := c.mempoolTx(gctx, id)
			fetched[i], found[i] = tx, ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("%s: mempool: %w", c.network, err)
	}
	next := make(map[string]mempoolTx, len(ids))
	for _, id := range ids {
		if tx, ok := c.mempool[id]; ok {
			next[id] = tx
		}
	}
	for i, tx := range fetched {
		if found[i] {
			next[missing[i]] = tx
		} else {
			c.log.Debug("mempool transaction left before it was fetched", "txid", missing[i])
		}
	}
	c.mempool = next

	var out []chains.Transfer
	for _, tx := range next {
		for i, o := range tx.outs {
			if !w.Contains(o.script) {
				continue
			}
			t, err := transfer(c.codec, tx.txid, i, o.script, o.value)
			if err != nil {
				return nil, fmt.Errorf("%s: mempool: %w: %v", c.network, chains.ErrInvalidResponse, err)
			}
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TxID != out[j].TxID {
			return out[i].TxID < out[j].TxID
		}
		return out[i].Index < out[j].Index
	})
	return out, nil
}

// mempoolTx fetches and decodes one transaction. ok is false when the
// transaction left the mempool (and the chain) between the two calls.
func (c *Client) mempoolTx(ctx context.Context, txid string) (mempoolTx, bool, error) {
	raw, err := c.rpc.callHex(ctx, "getrawtransaction", nil, txid, 0)
	var re *RPCError
	if errors.As(err, &re) && re.Code == codeNoSuchTx {
		return mempoolTx{}, false, nil
	}
	if err != nil {
		return mempoolTx{}, false, fmt.Errorf("tx %s: %w", txid, err)
	}
	tx, err := recovered(func() (mempoolTx, error) { return c.codec.tx(raw) })
	if err != nil {
		return mempoolTx{}, false, fmt.Errorf("tx %s: %w: %v", txid, chains.ErrInvalidResponse, err)
	}
	if tx.txid != txid {
		return mempoolTx{}, false, fmt.Errorf("tx %s: %w: got a transaction hashing to %s", txid, chains.ErrInvalidResponse, tx.txid)
	}
	return tx, true, nil
}
