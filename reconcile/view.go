package reconcile

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/chains/solana"
)

// Credit is one transfer to one of our keys as the node shows it.
type Credit struct {
	TxID    string
	Index   int64
	Asset   string
	Key     []byte
	Address string
	Amount  *big.Int
	Height  int64
}

// View is a node's own view of what our addresses received.
type View interface {
	// Credits returns the transfers the node shows in blocks [from, to]:
	// to keys (a sample) for a per-address view, to every watched key
	// otherwise (keys is then nil). An answer that contradicts itself is
	// an error, never a shorter list.
	Credits(ctx context.Context, from, to chains.Height, keys [][]byte) ([]Credit, error)
	// PerAddress reports whether the cost grows with the keys asked about
	// (then the reconciler samples them).
	PerAddress() bool
	// Calls returns the node calls made so far (for the cost figures).
	Calls() int64
}

// ErrInconsistent is a node whose answers contradict each other within one
// range (a block whose parent is not the block read before it).
var ErrInconsistent = errors.New("reconcile: node answers are inconsistent")

// budget spaces one view's node calls at least interval apart: its own
// rate limit, so that the reconciler never takes the scanner's share.
type budget struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

func newBudget(perSecond float64) *budget {
	b := &budget{}
	if perSecond > 0 {
		b.interval = time.Duration(float64(time.Second) / perSecond)
	}
	return b
}

// wait blocks until the next call is allowed.
func (b *budget) wait(ctx context.Context) error {
	if b.interval == 0 {
		return ctx.Err()
	}
	b.mu.Lock()
	now := time.Now()
	at := b.next
	if at.Before(now) {
		at = now
	}
	b.next = at.Add(b.interval)
	b.mu.Unlock()
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return ctx.Err()
}

// BlockView reads the range's blocks again through the scanner's source
// and keeps the transfers to Watched (Bitcoin, Litecoin, Ethereum, Tron,
// and Solana in block mode). Consecutive blocks must link (each one's
// parent is the block read before it, skipped Solana slots aside).
type BlockView struct {
	Source  chains.Source
	Watched chains.Watched
	// CallsPerBlock is the node calls one Source.Block makes (Bitcoin 2:
	// getblockhash and getblock; Tron 1 or 2; Ethereum 2 or more), for
	// the figures only.
	CallsPerBlock int64

	budget *budget
	calls  atomic.Int64
}

// PerAddress is false: a block costs the same whatever the keys.
func (v *BlockView) PerAddress() bool { return false }

// Calls returns the node calls made.
func (v *BlockView) Calls() int64 { return v.calls.Load() }

// Credits reads blocks from..to.
func (v *BlockView) Credits(ctx context.Context, from, to chains.Height, _ [][]byte) ([]Credit, error) {
	var out []Credit
	prev := ""
	// Behind a pool of endpoints, the range is read from one endpoint
	// other than the scanner's where there is one that showed it: a second
	// look, not the scanner's answers again.
	ctx = endpoints.Elsewhere(ctx, int64(to))
	for h := from; h <= to; h++ {
		if v.budget != nil {
			if err := v.budget.wait(ctx); err != nil {
				return nil, err
			}
		}
		b, err := v.Source.Block(ctx, h, v.Watched)
		v.calls.Add(max(v.CallsPerBlock, 1))
		if errors.Is(err, chains.ErrSkipped) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		if b.Height != h {
			return nil, fmt.Errorf("%w: asked for block %d, got %d", ErrInconsistent, h, b.Height)
		}
		if prev != "" && b.Parent != prev {
			return nil, fmt.Errorf("%w: block %d's parent %s is not block %s read before it (the node changed chains during the check)",
				ErrInconsistent, h, b.Parent, prev)
		}
		prev = b.Hash
		for _, t := range b.Transfers {
			out = append(out, Credit{TxID: t.TxID, Index: t.Index, Asset: string(t.Asset), Key: t.Key, Address: t.Address,
				Amount: t.Amount, Height: int64(h)})
		}
	}
	return out, nil
}

// SignatureView lists each sampled address's finalized signatures
// (getSignaturesForAddress, then getTransaction for each) and keeps the
// credits in the range: Solana's own index of our addresses, independent
// of the block reads the scanner made.
type SignatureView struct {
	Client *solana.Client

	budget *budget
	calls  atomic.Int64
}

// PerAddress is true: each address costs its own calls.
func (v *SignatureView) PerAddress() bool { return true }

// Calls returns the node calls made (a lower bound: one listing and one
// read per credit).
func (v *SignatureView) Calls() int64 { return v.calls.Load() }

// Credits lists keys one by one.
func (v *SignatureView) Credits(ctx context.Context, from, to chains.Height, keys [][]byte) ([]Credit, error) {
	var out []Credit
	for _, k := range keys {
		if v.budget != nil {
			if err := v.budget.wait(ctx); err != nil {
				return nil, err
			}
		}
		found, _, err := v.Client.Poll(endpoints.Elsewhere(ctx, 0), [][]byte{k}, nil)
		v.calls.Add(1 + int64(len(found)))
		if err != nil {
			return nil, err
		}
		for _, t := range found {
			if t.Slot < uint64(from) || t.Slot > uint64(to) {
				continue
			}
			out = append(out, Credit{TxID: t.TxID, Index: t.Index, Asset: string(t.Asset), Key: t.Key, Address: t.Address,
				Amount: t.Amount, Height: int64(t.Slot)})
		}
	}
	return out, nil
}
