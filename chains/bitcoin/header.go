package bitcoin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
)

var _ chains.HeaderSource = (*Client)(nil)

// Header returns the identity of the block at height (getblockhash, then
// getblockheader <hash> false: 80 bytes instead of the whole block). The
// header must hash to the hash asked for, or it is chains.ErrInvalidResponse.
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

// header is Header's reads, pinned to one endpoint.
func (c *Client) header(ctx context.Context, height chains.Height) (chains.BlockRef, error) {
	hash, err := c.blockHash(ctx, height)
	if err != nil {
		return chains.BlockRef{}, fmt.Errorf("%s: header %d: %w", c.network, height, err)
	}
	var buf [160]byte
	raw, err := c.rpc.callHex(ctx, "getblockheader", buf[:0], hash, false)
	if err != nil {
		return chains.BlockRef{}, fmt.Errorf("%s: header %d: %w", c.network, height, err)
	}
	if len(raw) != 80 {
		return chains.BlockRef{}, fmt.Errorf("%s: header %d: %w: getblockheader returned %d bytes, want 80",
			c.network, height, chains.ErrInvalidResponse, len(raw))
	}
	if got := displayHash(sha256d(raw)); got != hash {
		return chains.BlockRef{}, fmt.Errorf("%s: header %d: %w: asked for %s, got a header hashing to %s",
			c.network, height, chains.ErrInvalidResponse, hash, got)
	}
	return chains.BlockRef{Height: height, Hash: hash, Parent: displayHash([32]byte(raw[4:36]))}, nil
}

func sha256d(b []byte) [32]byte {
	h := sha256.Sum256(b)
	return sha256.Sum256(h[:])
}

// displayHash is a hash as nodes print it: byte-reversed hex.
func displayHash(h [32]byte) string {
	r := h
	slices.Reverse(r[:])
	return hex.EncodeToString(r[:])
}
