package chains

import (
	"context"
	"math/big"

	"github.com/paywatch/paywatch/payment"
)

// The optional capabilities, all in one place. A Source has the three
// methods of Source and any of the one-method interfaces below; each says
// what the scanner does without it. Every chain package pins the ones its
// client has with compile-time assertions (var _ chains.HeaderSource =
// (*Client)(nil)), and a test per package lists them, so a capability lost
// to a renamed method fails the build or a test, never silently takes the
// fallback.
//
// Source capabilities (the scanner finds them by type assertion on the
// Source):
//
//	HeaderSource     Header          fallback: Block read for no keys
//	ChainMembership  InBestChain     fallback: a replaced tip block is seen
//	                                 at the next block; a node behind the
//	                                 cursor is compared by stored hash only
//	PendingSource    Pending         fallback: no mempool; transfers are
//	                                 first seen in a block
//	BalanceChecker   NativeBalances  fallback: no balance reconciliation
//	                                 (the source sees every native payment)
//	BalanceNeed      NeedsBalanceCheck  fallback: a BalanceChecker is always
//	                                 reconciled
//	SparseSource     SparseBlocks    fallback: every height is read
//	SparseMode       Sparse          fallback: a SparseSource is always
//	                                 sparse
//	Notifier         Notify          fallback: polling only
//	ChainVerifier    VerifyChain     fallback: the node's chain is never
//	                                 checked (identity.go)
//
// Optional sink roles (fields of Sinks; nil takes the fallback):
//
//	BatchSink        ApplyBlocks     fallback: one transaction per block
//	BalanceSink      CheckBalances   fallback: no balance reconciliation
//	PendingRecorder  RecordPending   fallback: while the node's tip lags its
//	                                 mempool, the mempool read is dropped

// HeaderSource is implemented by sources that can read a block's identity
// without its transactions (a Bitcoin header, an Ethereum block without
// transactions, a Solana block without details). The scanner needs only the
// identity where it compares hashes: the reorg walk-back, the check of a
// node behind the cursor, and the block below the first height at start-up
// or rescan. Without it the whole block is read (Header).
type HeaderSource interface {
	// Header returns the identity of the block at height on the node's best
	// chain; like Source.Block, above the tip is ErrBlockNotFound and a slot
	// without a block is ErrSkipped.
	Header(ctx context.Context, height Height) (BlockRef, error)
}

// ChainMembership is implemented by sources whose node can tell whether a
// block it knows is on its best chain (Bitcoin Core and btcd keep stale
// blocks). It separates "our block was reorganized away" from "the node has
// not seen our block yet". Without it a tip block replaced at the same
// height is seen when the next block arrives, and a node behind the cursor
// is judged by comparing its block at its tip with the stored one.
type ChainMembership interface {
	// InBestChain reports whether the node knows the block hash and whether
	// it is on the node's best chain.
	InBestChain(ctx context.Context, hash string) (known, best bool, err error)
}

// PendingSource is implemented by networks with a mempool (BTC, LTC). Pending
// returns every transfer to a watched key that is in the mempool now; the
// scanner records new ones as detected and drops the ones that vanished
// (ChainHandler.ApplyPending). Without it a transfer is first seen in a
// block.
type PendingSource interface {
	Pending(ctx context.Context, w Watched) ([]Transfer, error)
}

// BalanceChecker is implemented by an account-model source that can miss
// native payments: an Ethereum node that cannot trace internal calls does not
// show ETH sent to us by a contract. The scanner then has the BalanceSink
// reconcile the balances of the addresses it waits on, once per new tips
// while caught up. Without it (or without a BalanceSink) nothing is
// reconciled.
type BalanceChecker interface {
	// NativeBalances returns the native balance, in base units, of each key
	// (in order) in the block at (one request per key, batched; the number of
	// calls grows with len(keys) only, never with the watched set).
	NativeBalances(ctx context.Context, keys [][]byte, at BlockRef) ([]*big.Int, error)
}

// BalanceNeed is implemented by a BalanceChecker whose need depends on how
// it reads blocks (an Ethereum client that traces internal calls misses
// nothing). Without it a BalanceChecker is always reconciled.
type BalanceNeed interface {
	// NeedsBalanceCheck reports whether native payments can be missed; when
	// false the scanner never calls NativeBalances.
	NeedsBalanceCheck() bool
}

// SparseSource is implemented by a Source whose blocks are final when
// served (Solana at finalized commitment): instead of reading every height
// it finds the few blocks that hold transfers to watched keys, for example
// by asking the node for each watched address's recent transactions. The
// scanner's catch-up then calls SparseBlocks instead of Block (when
// SparseMode, if implemented, says so); init, rescans and reorg checks still
// use Block. Without it every height is read.
type SparseSource interface {
	// SparseBlocks returns, in ascending height order within [from, to], the
	// blocks that hold a transfer to a key of w, followed (unless it is
	// already the last one) by the newest block at or below to, possibly
	// without transfers, so that the cursor passes the heights in between.
	// Heights, hashes and times are the chain's; Parent links each block to
	// the one before it in the list and the first one to parent (the
	// cursor's hash): a sparse scan is a chain of the blocks it applies. An
	// error means nothing was read; the scanner retries from its cursor.
	SparseBlocks(ctx context.Context, from, to Height, parent string, w Watched) ([]Block, error)
}

// SparseMode is implemented by a SparseSource that scans sparsely only in
// some modes (chosen by configuration or by the watched set's size).
// Without it a SparseSource is always sparse.
type SparseMode interface {
	// Sparse reports whether the source scans sparsely for w right now.
	Sparse(w Watched) bool
}

// Notifier is implemented by sources whose node can say that something
// changed (a new block, a new mempool transaction). Notify calls wake for
// each notification until ctx ends (then it returns nil) or the subscription
// is lost (then it returns why). A wake only makes the scanner step now: the
// database cursor stays the only truth, so a wake never skips a height and a
// lost one only costs a poll interval. Without it the scanner polls
// (KeepNotified).
type Notifier interface {
	Notify(ctx context.Context, wake func()) error
}

// BatchSink applies several consecutive blocks in one transaction, all or
// none. A catch-up then pays one transaction per batch of Parallel blocks
// instead of one per block. Without it (Sinks.Batch nil) each block is
// applied by ChainHandler.ApplyBlock in its own transaction.
type BatchSink interface {
	// ApplyBlocks applies blocks as ApplyBlock would one after the other:
	// the first extends the cursor and each the one before it.
	ApplyBlocks(ctx context.Context, network payment.Network, blocks []Block, tips Tips) error
}

// BalanceSink reconciles native balances: at the confirmation depth of each
// open intent it turns the part of the address's balance that no recorded
// transfer explains into a finance item. Calling it again at the same tips
// records nothing new. Without it (Sinks.Balance nil) a BalanceChecker
// source is not reconciled.
type BalanceSink interface {
	CheckBalances(ctx context.Context, network payment.Network, tips Tips, src BalanceChecker) error
}

// PendingRecorder records the mempool's transfers without taking the
// recorded ones missing from it for vanished (ChainHandler.ApplyPending does
// both). The scanner uses it while the node's tip lags its own mempool.
// Without it (Sinks.Pending nil) such a mempool read is dropped and read
// again at the next step.
type PendingRecorder interface {
	RecordPending(ctx context.Context, network payment.Network, pending []Transfer) error
}
