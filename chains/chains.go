package chains

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// ErrBlockNotFound is returned by Source.Block for a height above the node's
// tip (not yet produced). The scanner waits and asks again.
var ErrBlockNotFound = errors.New("block not found")

// ErrSkipped is returned by Source.Block for a height that has no block and
// never will (a skipped Solana slot). The scanner moves past it.
var ErrSkipped = errors.New("slot skipped")

// ErrInvalidResponse wraps a node answer that does not parse or contradicts
// itself. It is never retried into a skip: the scanner stops at its cursor.
var ErrInvalidResponse = errors.New("invalid node response")

// NativeIndex is Transfer.Index for the native-coin transfer of an
// account-model transaction (ETH value, TRX TransferContract), which has no
// output or log index of its own. Token transfers use their log index.
const NativeIndex int64 = -1

// Height is a block's position in its chain (the slot for Solana; 0 is the
// genesis block). BlockRef, the cursor, the tips and every Source method
// speak in it. It is signed, as the database's BIGINT and the walk-back's
// arithmetic are; a node's unsigned number is converted where it is read.
type Height int64

// BlockRef identifies a block: its height (slot for Solana), its hash and its
// parent's hash. It is never reduced to a bare height.
type BlockRef struct {
	Height Height
	Hash   string
	Parent string
}

// Transfer is money arriving at a watched key in one transaction.
//
// The natural key is (network, TxID, Index), a function of the transaction
// alone, so that the transaction mined again at another position in another
// block is the same transfer: BTC/LTC output index, the ERC-20 or TRC-20
// log's position among its transaction's logs, NativeIndex for ETH/TRX value
// transfers, -2-k for the k-th internal transfer of the transaction's trace
// (ETH) or internal transaction list (TRX), Solana account index.
type Transfer struct {
	// TxID is the transaction id as the network's explorers show it.
	TxID string
	// Index distinguishes several transfers of one transaction.
	Index int64
	// Asset is payment.Native or a token symbol.
	Asset payment.Asset
	// Key is the watched binary key the money went to.
	Key []byte
	// Address is Key in the network's display form.
	Address string
	// Amount is in the asset's base units; never negative.
	Amount *big.Int
	// Coinbase is true for an output of a block's coinbase transaction
	// (Bitcoin, Litecoin): spendable, and so paying, only after
	// payment.CoinbaseMaturity confirmations.
	Coinbase bool
	// PegOut is true for an output of a Litecoin block's HogEx transaction
	// (an MWEB peg-out): spendable, and so paying, only after
	// payment.PegoutMaturity confirmations.
	PegOut bool
}

// Block is a block reduced to what paywatch needs.
type Block struct {
	BlockRef
	Time time.Time
	// Transfers are the transfers to watched keys, in block order.
	Transfers []Transfer
	// Endpoint names the endpoint of the network's pool that served the
	// block ("" without a pool): a large payment's second source is
	// another one (issue 33 item 5).
	Endpoint string
}

// Watched answers whether a binary key belongs to us. Implementations are
// safe for concurrent use; Contains must not allocate.
type Watched interface {
	Contains(key []byte) bool
}

// BatchWatched is implemented by a Watched that answers many keys at once
// faster than one by one (WatchSet overlaps their memory loads). A source
// that decodes a whole block looks its candidate keys up with
// ContainsEach, which uses it where the set has it.
type BatchWatched interface {
	Watched
	// ContainsBatch sets out[i] to Contains(keys[i]) for every key; out
	// is at least as long as keys.
	ContainsBatch(keys [][]byte, out []bool)
}

// ContainsEach sets out[i] to w.Contains(keys[i]) for every key, in one
// batch where w is a BatchWatched. out must be at least as long as keys.
func ContainsEach(w Watched, keys [][]byte, out []bool) {
	if b, ok := w.(BatchWatched); ok {
		b.ContainsBatch(keys, out)
		return
	}
	out = out[:len(keys)]
	for i, k := range keys {
		out[i] = w.Contains(k)
	}
}

// Source is a network client as the scanner needs it.
type Source interface {
	// Tip returns the height of the node's best block.
	Tip(ctx context.Context) (Height, error)
	// FinalizedHeight returns the highest height the network considers
	// irreversible (Tron solidified, Ethereum finalized, Solana finalized).
	// Networks without finality (BTC, LTC) return 0.
	FinalizedHeight(ctx context.Context) (Height, error)
	// Block returns the block at height on the node's current best chain with
	// the transfers to watched keys. A height above the tip is
	// ErrBlockNotFound; a slot without a block is ErrSkipped.
	Block(ctx context.Context, height Height, w Watched) (Block, error)
}

// Prefetched answers Contains from one batch lookup made up front, for a
// decoder that, having collected a block's candidate keys in order and
// looked them up at once (so the set overlaps the lookups), asks about
// them again one by one in the same order, skipping any: it keeps its
// one-pass shape. A key asked out of that order, or never collected, is
// asked of the set itself, so every answer is the set's. Unlike a
// Watched, it is for one decode on one goroutine.
type Prefetched struct {
	w    Watched
	keys [][]byte
	ok   []bool
	next int
}

// Prefetch looks keys up in w in one batch (ContainsEach).
func Prefetch(w Watched, keys [][]byte) *Prefetched {
	p := &Prefetched{w: w, keys: keys, ok: make([]bool, len(keys))}
	ContainsEach(w, keys, p.ok)
	return p
}

// Contains reports whether key is watched: the prefetched answer of the
// next collected key equal to it, else the set's.
func (p *Prefetched) Contains(key []byte) bool {
	for i := p.next; i < len(p.keys); i++ {
		if bytes.Equal(p.keys[i], key) {
			p.next = i + 1
			return p.ok[i]
		}
	}
	return p.w.Contains(key)
}
