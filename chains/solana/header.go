package solana

import (
	"context"
	"errors"
	"fmt"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
)

var _ chains.HeaderSource = (*Client)(nil)

// Header returns the identity of the finalized block at slot from one
// getBlock without transactions or rewards. Like Block, a skipped slot is
// chains.ErrSkipped and a slot above the finalized tip chains.ErrBlockNotFound.
func (c *Client) Header(ctx context.Context, height chains.Height) (chains.BlockRef, error) {
	ctx = endpoints.Pin(ctx, int64(height))
	for {
		ref, err := c.header(ctx, height)
		if !errors.Is(err, chains.ErrSkipped) && endpoints.Again(ctx, err, "block not available at a slot it showed finalized") {
			continue
		}
		return ref, err
	}
}

// header is Header's read.
func (c *Client) header(ctx context.Context, height chains.Height) (chains.BlockRef, error) {
	slot := uint64(height)
	var b chains.Block
	err := c.call(ctx, "getBlock", headerParams(slot), func(body []byte) error {
		var err error
		b, err = decodeBlock(slot, body, keySet{})
		return err
	})
	if err == nil {
		return b.BlockRef, nil
	}
	err = classify(err, "getBlock", slot)
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) && rpcErr.Code == codeBlockNotAvailable {
		fin, ferr := c.finalizedSlot(ctx)
		if ferr == nil && slot > fin {
			return chains.BlockRef{}, fmt.Errorf("solana: header %d above finalized slot %d: %w", slot, fin, chains.ErrBlockNotFound)
		}
	}
	return chains.BlockRef{}, err
}
