package evm

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
)

var _ chains.HeaderSource = (*Client)(nil)

// Header returns the identity of the block at height from one
// eth_getBlockByNumber without transactions (no receipts, logs or traces).
func (c *Client) Header(ctx context.Context, height chains.Height) (chains.BlockRef, error) {
	ctx = endpoints.Pin(ctx, int64(height))
	for {
		ref, err := c.header(ctx, height)
		if endpoints.Again(ctx, err, "header not found at a height it showed") {
			continue
		}
		return ref, err
	}
}

// header is Header's read.
func (c *Client) header(ctx context.Context, height chains.Height) (chains.BlockRef, error) {
	var h *rpcHeader
	if err := c.rpc.CallContext(ctx, &h, "eth_getBlockByNumber", hexutil.Uint64(height), false); err != nil {
		return chains.BlockRef{}, classify(err, fmt.Sprintf("eth_getBlockByNumber header at height %d", height))
	}
	if h == nil {
		return chains.BlockRef{}, fmt.Errorf("ethereum header %d: %w", height, chains.ErrBlockNotFound)
	}
	switch {
	case h.Number == nil || h.Hash == nil || h.ParentHash == nil:
		return chains.BlockRef{}, fmt.Errorf("ethereum header %d: missing number, hash or parentHash: %w", height, chains.ErrInvalidResponse)
	case chains.Height(*h.Number) != height:
		return chains.BlockRef{}, fmt.Errorf("ethereum header %d: block number %d: %w", height, uint64(*h.Number), chains.ErrInvalidResponse)
	case *h.Hash == (common.Hash{}):
		return chains.BlockRef{}, fmt.Errorf("ethereum header %d: zero block hash: %w", height, chains.ErrInvalidResponse)
	}
	return chains.BlockRef{Height: height, Hash: h.Hash.Hex(), Parent: h.ParentHash.Hex()}, nil
}
