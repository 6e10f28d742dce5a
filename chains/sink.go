package chains

import (
	"context"

	"github.com/paywatch/paywatch/payment"
)

// Tips are a network's heights as last seen from the node.
type Tips struct {
	Node  Height
	Final Height
}

// Cursor is the scanner's durable position.
type Cursor struct {
	Height     Height
	Hash       string
	Critical   string
	RescanFrom *Height
	// Final is the node's finalized height as last recorded: stored blocks
	// at or below it were final when the node reported it.
	Final Height
}

// Health is what the scanner reports after each step.
type Health struct {
	Healthy   bool
	LastError string
	// Critical is set (sticky) for a broken invariant such as a deep reorg.
	Critical string
}

// The scanner writes to three roles (Sinks): where it is (CursorStore),
// what the chain did (ChainHandler) and how the network is doing
// (HealthRecorder). Every method is one database transaction, and the
// database cursor is the only truth.

// CursorStore is the scanner's durable position and the block hashes stored
// below it, which a reorg walk-back compares with the node's.
type CursorStore interface {
	// Cursor returns the network's cursor; ErrNoCursor before its first
	// scan.
	Cursor(ctx context.Context, network payment.Network) (Cursor, error)
	// InitCursor creates the cursor at the block (height, hash).
	InitCursor(ctx context.Context, network payment.Network, height Height, hash string) error
	// Reset moves the cursor to height without orphaning anything (a rescan
	// replays blocks; replays are harmless).
	Reset(ctx context.Context, network payment.Network, height Height, hash string) error
	// BlockHash returns the stored hash at height; ErrNoStoredBlock (wrapped)
	// when none is kept there, any other error is transient.
	BlockHash(ctx context.Context, network payment.Network, height Height) (string, error)
}

// BlockHashRange is a CursorStore that also reads the stored hashes of a
// range of heights in one read (a height without a stored block has no
// entry): a reorg's walk-back then costs one read however deep it goes.
type BlockHashRange interface {
	BlockHashes(ctx context.Context, network payment.Network, from, to Height) (map[Height]string, error)
}

// ChainHandler records what the chain did: a block that extends the cursor,
// a reorg back to a common ancestor, new tips, the mempool.
type ChainHandler interface {
	// ApplyBlock records a block that extends the cursor and moves the
	// cursor onto it.
	ApplyBlock(ctx context.Context, network payment.Network, b Block, tips Tips) error
	// Rewind orphans what lies above height and moves the cursor there.
	Rewind(ctx context.Context, network payment.Network, height Height, hash string) error
	// ApplyTips records new tips (confirmations and finality move).
	ApplyTips(ctx context.Context, network payment.Network, tips Tips) error
	// ApplyPending records the mempool's transfers to watched keys and takes
	// the recorded ones missing from it for vanished.
	ApplyPending(ctx context.Context, network payment.Network, pending []Transfer) error
}

// HealthRecorder records the outcome of each scanner step.
type HealthRecorder interface {
	SetHealth(ctx context.Context, network payment.Network, h Health) error
}

// Sinks are the roles a Scanner writes to. Cursor, Chain and Health are
// required; the optional roles take the fallback capabilities.go names when
// nil. One value usually fills every field; a test wraps just the role it
// needs to fail.
type Sinks struct {
	Cursor CursorStore
	Chain  ChainHandler
	Health HealthRecorder
	// Batch applies a catch-up window in one transaction (nil: one per
	// block).
	Batch BatchSink
	// Balance reconciles native balances for a BalanceChecker source (nil:
	// none).
	Balance BalanceSink
	// Pending records a mempool read while the node's tip lags it (nil: the
	// read is dropped).
	Pending PendingRecorder
}

// KeySource refreshes the watched set from the database.
type KeySource interface {
	Refresh(ctx context.Context, network payment.Network, set *WatchSet) error
}

// KeyCursorSource is a KeySource that also reads the network's cursor in
// the same round trip (ErrNoCursor before the first scan): a scanner step
// reads both first, so it costs one read fewer. The cursor must be the one
// the scanner's CursorStore keeps.
type KeyCursorSource interface {
	KeySource
	RefreshCursor(ctx context.Context, network payment.Network, set *WatchSet) (Cursor, error)
}
