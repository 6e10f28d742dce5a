package chains

import "errors"

// ErrNodeBehind is returned by a scanner step when the node's best height is
// below the cursor but nothing shows that our blocks left its chain: a
// lagging node (a load-balanced provider, a resync). The scanner waits and
// rewinds nothing; the network is unhealthy, not critical.
var ErrNodeBehind = errors.New("node is behind the cursor")
