// Package chainstest is the conformance suite every chains.Source passes, real
// node or fake, so that the scanner can rely on one behaviour: heights link by
// parent hash, a payment to a watched key appears exactly once with its exact
// amount, unwatched keys are never reported, heights above the tip are
// chains.ErrBlockNotFound, and a reorg changes the hash at the reorged height.
package chainstest
