package bitcoin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/paywatch/paywatch/chains"
)

var _ chains.ChainMembership = (*Client)(nil)

// InBestChain asks the node about a block hash with getblockheader: Core
// answers confirmations -1 for a block off its best chain; btcd refuses
// stale blocks with "not in the main chain"; both answer -5 "Block not
// found" for a block they never saw.
func (c *Client) InBestChain(ctx context.Context, hash string) (known, best bool, err error) {
	var hdr struct {
		Hash          string `json:"hash"`
		Confirmations *int64 `json:"confirmations"`
	}
	err = c.rpc.call(ctx, "getblockheader", &hdr, hash, true)
	var re *RPCError
	if errors.As(err, &re) {
		msg := strings.ToLower(re.Message)
		switch {
		case strings.Contains(msg, "main chain"):
			return true, false, nil
		case re.Code == -5:
			return false, false, nil
		}
	}
	if err != nil {
		return false, false, fmt.Errorf("%s: getblockheader %s: %w", c.network, hash, err)
	}
	if hdr.Confirmations == nil || hdr.Hash != hash {
		return false, false, fmt.Errorf("%s: getblockheader %s: %w: no confirmations or another hash", c.network, hash, chains.ErrInvalidResponse)
	}
	return true, *hdr.Confirmations >= 0, nil
}
