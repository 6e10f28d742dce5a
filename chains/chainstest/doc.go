// Package chainstest is the conformance suite every chains.Source passes, real
// node or fake, so that the scanner can rely on one behaviour: heights link by
// parent hash, a payment to a watched key appears exactly once with its exact
// amount, unwatched keys are never reported, heights above the tip are
// chains.ErrBlockNotFound, and a reorg changes the hash at the reorged height.
//
// RunWS is the websocket notify suite every chain's chains.WSFeed passes,
// against a misbehaving node in the test (wsnode.go): it drops connections,
// trickles frames, reads late, sends garbage, falls silent without a pong
// and refuses subscriptions; the feed, kept up by chains.KeepNotified, wakes
// on every valid notification and on nothing else, redials with backoff,
// notices silence, never panics, names no secret and stops promptly when
// its context ends. Woken (RunWoken) is the push-wake harness of the scanner
// against real and simulated nodes.
package chainstest
