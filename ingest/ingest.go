package ingest

import (
	"context"
	"log/slog"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/store"
)

// Decider decides an intent again after what the chain says about its
// transfers changed; *intents.Service is one.
type Decider interface {
	// RedecideAll decides the payables of the given intents again in tx,
	// each once, in payable order, locking each payable then its intents.
	RedecideAll(ctx context.Context, tx *store.Tx, ids []string, now time.Time) error
}

// CreditFollower keeps finance's account credits in line with the chain;
// *finance.Service is one.
type CreditFollower interface {
	// FollowChain reverses or restores the credit_account credit of
	// transfer id in tx as the transfer left or rejoined the chain.
	FollowChain(ctx context.Context, tx *store.Tx, id string, now time.Time) error
	// Reexecuted undoes, in tx, finance's decisions on transfer id made on
	// the content it had (was) before its transaction, mined again, moved
	// another amount, asset or address.
	Reexecuted(ctx context.Context, tx *store.Tx, id string, was store.Transfer, now time.Time) error
}

var (
	_ Decider        = (*intents.Service)(nil)
	_ CreditFollower = (*finance.Service)(nil)
)

// Counter counts recorded transfers (metrics); called after commit, once per
// new transfer.
type Counter interface {
	TransferRecorded(network, asset string)
}

// DetectionObserver, when the Counter also implements it, is told how long
// after its block's time each transfer first seen in a block was recorded
// (a latency metric); called after commit.
type DetectionObserver interface {
	TransferDetected(network string, after time.Duration)
}

// Options wires a Sink.
type Options struct {
	Store  *store.Store
	Config *config.Config
	// Decider decides the intents a block, tip, rewind or mempool read
	// touched, in the same transaction.
	Decider Decider
	// Credits follows account credits of moved transfers, in the same
	// transaction.
	Credits CreditFollower
	// Counter, when set, counts new transfers.
	Counter Counter
	// Clock is the clock of what is recorded; nil is the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
}

// Sink is what the scanners write to: it records what they observe and has
// the intents and finance follow it, one transaction per step.
type Sink struct {
	store   *store.Store
	cfg     *config.Config
	decider Decider
	credits CreditFollower
	counter Counter
	now     func() time.Time
	log     *slog.Logger
	// fence, when set, is the lease every write is made under (Fenced).
	fence *store.Fence
}

// New returns a Sink.
func New(opt Options) *Sink {
	opt.Clock = clock.Or(opt.Clock)
	opt.Log = logs.Or(opt.Log)
	return &Sink{store: opt.Store, cfg: opt.Config, decider: opt.Decider, credits: opt.Credits, counter: opt.Counter,
		now: clock.Stored(opt.Clock.Now), log: opt.Log.With("component", "ingest")}
}

// Fenced returns a Sink whose every write (each block, tip, rewind, mempool
// read, balance-check item, cursor reset and health record) is made under
// f: its transaction checks, in the same round trip as its first
// statement, that f's lease is still held with f's token, and fails with
// store.ErrFenced, having changed nothing, once another instance took the
// lease over. A leader frozen past its lease writes nothing when it wakes.
func (s *Sink) Fenced(f *store.Fence) *Sink {
	c := *s
	c.fence = f
	return &c
}

// inTx runs fn in a transaction under the Sink's fence (if any).
func (s *Sink) inTx(ctx context.Context, fn func(*store.Tx) error) error {
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		tx.Fence(s.fence)
		return fn(tx)
	})
}
