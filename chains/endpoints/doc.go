// Package endpoints is the pool of a network's node endpoints (issue 33):
// several nodes or rented providers behind one http.RoundTripper that each
// chain's RPC client sends through, as Chainlink's MultiNode and viem's
// fallback transport do.
//
// Each endpoint is a small state machine fed by the calls already made:
// healthy; lagging (behind the best head any endpoint proved by more than
// the lag bound for longer than a grace time, not on one sample);
// throttled (429, or 403/503 with a rate-limit body; Retry-After is
// honoured, and a throttled endpoint is backed off, not written off);
// unreachable (a connection error or a gateway failure, retried after a
// backoff); wrong chain (the chain identity check, per endpoint). A head
// that goes backwards is ignored. A request goes to the usable endpoint of
// the lowest priority, then the fewest recent failures, then the lowest
// latency (one behind the best head by more than the bound goes last even
// within its grace time); a failed or throttled one is retried on the next.
//
// A token bucket per endpoint paces requests (max_requests_per_second,
// burst) and a daily budget is counted; a request waits on the pool's
// clock for a token rather than exceed them.
//
// Pin marks a context whose requests read one block: they all go to the
// endpoint that served the first of them, and only to an endpoint that
// proved it holds the block (its head at or above the height), so a
// "not found" from an endpoint that has not seen the block is never taken
// as an empty block. ObserveHead records the head an endpoint answered.
// Refuse (and Again, the loop around a block's reads) turns away, for that
// block, an endpoint that showed it and then answered as if it lacked it
// (a load balancer's stale backend): the block is read again, whole, from
// another endpoint that showed it, when there is one.
//
// Only an endpoint's name leaves this package (status, errors, logs): its
// URL and headers hold provider keys.
package endpoints
