package tron

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
)

var _ chains.HeaderSource = (*Client)(nil)

// headerOnlyJSON is a getblockbynum answer with only the block's identity
// decoded: the transactions are not parsed and their infos not fetched.
type headerOnlyJSON struct {
	BlockID     string      `json:"blockID"`
	BlockHeader *headerJSON `json:"block_header"`
}

// Header returns the identity of block height from one getblockbynum, without
// decoding its transactions or fetching their infos.
func (c *Client) Header(ctx context.Context, at chains.Height) (chains.BlockRef, error) {
	ctx = endpoints.Pin(ctx, int64(at))
	for {
		ref, err := c.header(ctx, at)
		if endpoints.Again(ctx, err, "no block at a height it showed") {
			continue
		}
		return ref, err
	}
}

// header is Header's read.
func (c *Client) header(ctx context.Context, at chains.Height) (chains.BlockRef, error) {
	height := uint64(at)
	body, err := c.post(ctx, "/wallet/getblockbynum", numBody(height))
	if err != nil {
		return chains.BlockRef{}, fmt.Errorf("tron: header %d: %w", height, err)
	}
	if isEmptyObject(body) {
		return chains.BlockRef{}, fmt.Errorf("tron: header %d: %w", height, chains.ErrBlockNotFound)
	}
	var b headerOnlyJSON
	if err := json.Unmarshal(body, &b); err != nil {
		return chains.BlockRef{}, fmt.Errorf("tron: header %d: %w: %v", height, chains.ErrInvalidResponse, err)
	}
	if _, err := checkBlock(height, &blockJSON{BlockID: b.BlockID, BlockHeader: b.BlockHeader}); err != nil {
		return chains.BlockRef{}, err
	}
	return chains.BlockRef{Height: chains.Height(height), Hash: b.BlockID, Parent: b.BlockHeader.RawData.ParentHash}, nil
}
