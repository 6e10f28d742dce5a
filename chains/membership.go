package chains

import (
	"context"
	"errors"
)

// ErrNodeBehind is returned by a scanner step when the node's best height is
// below the cursor but nothing shows that our blocks left its chain: a
// lagging node (a load-balanced provider, a resync). The scanner waits and
// rewinds nothing; the network is unhealthy, not critical.
var ErrNodeBehind = errors.New("node is behind the cursor")

// ChainMembership is implemented by sources whose node can tell whether a
// block it knows is on its best chain (Bitcoin Core and btcd keep stale
// blocks). It separates "our block was reorganized away" from "the node has
// not seen our block yet".
type ChainMembership interface {
	// InBestChain reports whether the node knows the block hash and whether
	// it is on the node's best chain.
	InBestChain(ctx context.Context, hash string) (known, best bool, err error)
}
