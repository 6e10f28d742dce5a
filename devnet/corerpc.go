package devnet

import "context"

// CoreRPC is the Bitcoin Core-style JSON-RPC that btcd and Litecoin Core
// both answer; Btcd and Litecoind embed it.
type CoreRPC struct {
	// RPCURL is http://u:p@127.0.0.1:port (no TLS).
	RPCURL string
}

// Call invokes an RPC method on the node and decodes its result into out
// (nil discards it).
func (c CoreRPC) Call(ctx context.Context, method string, out any, params ...any) error {
	return rpcCall(ctx, c.RPCURL, method, out, params...)
}

// Tip returns the node's block count.
func (c CoreRPC) Tip(ctx context.Context) (int64, error) {
	var n int64
	err := c.Call(ctx, "getblockcount", &n)
	return n, err
}

// BlockHash returns the hash of the block at height on the best chain.
func (c CoreRPC) BlockHash(ctx context.Context, height int64) (string, error) {
	var h string
	err := c.Call(ctx, "getblockhash", &h, height)
	return h, err
}

// InvalidateBlock marks a block and its descendants invalid; the node's best
// chain falls back to its parent and its transactions return to the mempool.
func (c CoreRPC) InvalidateBlock(ctx context.Context, hash string) error {
	return c.Call(ctx, "invalidateblock", nil, hash)
}

// ReconsiderBlock undoes InvalidateBlock.
func (c CoreRPC) ReconsiderBlock(ctx context.Context, hash string) error {
	return c.Call(ctx, "reconsiderblock", nil, hash)
}
