package evm

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paywatch/paywatch/chains"
)

var (
	_ chains.BalanceChecker = (*Client)(nil)
	_ chains.BalanceNeed    = (*Client)(nil)
)

// NeedsBalanceCheck reports whether ETH sent to us by a contract can be
// missed: true unless the client traces blocks (TraceMode "trace").
func (c *Client) NeedsBalanceCheck() bool { return !c.trace }

// NativeBalances returns the wei balance of each 20-byte key in the block
// at, named by its hash (EIP-1898 {blockHash, requireCanonical}) so that a
// reorg between the scan and the check is an error, not a balance of another
// block. Calls are batched balanceBatch at a time.
func (c *Client) NativeBalances(ctx context.Context, keys [][]byte, at chains.BlockRef) ([]*big.Int, error) {
	raw, err := hexutil.Decode(at.Hash)
	if err != nil || len(raw) != common.HashLength {
		return nil, fmt.Errorf("evm: balance check at height %d: block hash %q is not a 32-byte hash", at.Height, at.Hash)
	}
	block := map[string]any{"blockHash": common.BytesToHash(raw), "requireCanonical": true}
	out := make([]*big.Int, len(keys))
	for start := 0; start < len(keys); start += balanceBatch {
		chunk := keys[start:min(start+balanceBatch, len(keys))]
		res := make([]*hexutil.Big, len(chunk))
		batch := make([]rpc.BatchElem, len(chunk))
		for i, k := range chunk {
			if len(k) != common.AddressLength {
				return nil, fmt.Errorf("evm: balance check at height %d: key %x is not a 20-byte address", at.Height, k)
			}
			batch[i] = rpc.BatchElem{Method: "eth_getBalance", Args: []any{common.BytesToAddress(k), block}, Result: &res[i]}
		}
		if err := c.rpc.BatchCallContext(ctx, batch); err != nil {
			return nil, classify(err, fmt.Sprintf("eth_getBalance at block %d %s", at.Height, at.Hash))
		}
		for i, el := range batch {
			a := common.BytesToAddress(chunk[i])
			if el.Error != nil {
				return nil, classify(el.Error, fmt.Sprintf("eth_getBalance(%s) at block %d %s", a, at.Height, at.Hash))
			}
			if res[i] == nil || res[i].ToInt().Sign() < 0 {
				return nil, fmt.Errorf("eth_getBalance(%s) at block %d %s: no balance: %w", a, at.Height, at.Hash, chains.ErrInvalidResponse)
			}
			out[start+i] = res[i].ToInt()
		}
	}
	return out, nil
}
