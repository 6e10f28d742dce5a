package chainstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// Fake is a scripted in-memory chain implementing chains.Source and
// chains.PendingSource, for fast scanner tests. Blocks link by parent hash;
// Reorg replaces blocks with new hashes; errors can be injected. It is safe
// for concurrent use.
type Fake struct {
	mu      sync.Mutex
	blocks  []fakeBlock // index = height
	pending []chains.Transfer
	next    []chains.Transfer // transfers of the next mined block
	final   chains.Height
	finalFn func(tip chains.Height) chains.Height
	fail    map[chains.Height]error
	failTip error
	salt    int
	clock   func() time.Time
	fetches int
	// stamp shifts the time of blocks mined from now on (block times that
	// lag or lead the clock).
	stamp   time.Duration
	headers int
}

type fakeBlock struct {
	ref       chains.BlockRef
	time      time.Time
	transfers []chains.Transfer
	// skipped is a slot without a block (Solana): Block returns ErrSkipped.
	skipped bool
}

// FakeBlock is a height of a Fake's best chain as Chain returns it.
type FakeBlock struct {
	chains.BlockRef
	Time time.Time
	// Skipped is a slot that has no block.
	Skipped bool
	// Transfers are every transfer of the block, watched or not.
	Transfers []chains.Transfer
}

var _ chains.Source = (*Fake)(nil)
var _ chains.PendingSource = (*Fake)(nil)
var _ chains.HeaderSource = (*Fake)(nil)

// NewFake returns a chain with a genesis block at height 0. clock stamps
// block times (nil: time.Now).
func NewFake(clock func() time.Time) *Fake {
	if clock == nil {
		clock = time.Now
	}
	f := &Fake{fail: map[chains.Height]error{}, clock: clock}
	f.blocks = append(f.blocks, fakeBlock{ref: chains.BlockRef{Height: 0, Hash: f.hash(0, ""), Parent: ""}, time: clock()})
	return f
}

func (f *Fake) hash(h chains.Height, parent string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d/%s/%d", h, parent, f.salt)))
	return hex.EncodeToString(sum[:])
}

// TxID returns a deterministic transaction id for a label.
func TxID(label string) string {
	sum := sha256.Sum256([]byte(label))
	return hex.EncodeToString(sum[:])
}

// Send queues a transfer for the next mined block and returns it.
func (f *Fake) Send(txid string, index int64, asset payment.Asset, key []byte, address string, amount *big.Int) chains.Transfer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := chains.Transfer{TxID: txid, Index: index, Asset: asset, Key: key, Address: address, Amount: new(big.Int).Set(amount)}
	f.next = append(f.next, t)
	return t
}

// Broadcast puts a transfer in the mempool (Pending) and queues it for the
// next block, as a real node does.
func (f *Fake) Broadcast(t chains.Transfer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, t)
	f.next = append(f.next, t)
}

// Drop removes a transaction from the mempool and the next block (replaced
// or evicted).
func (f *Fake) Drop(txid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = filter(f.pending, txid)
	f.next = filter(f.next, txid)
}

func filter(ts []chains.Transfer, txid string) []chains.Transfer {
	out := ts[:0:0]
	for _, t := range ts {
		if t.TxID != txid {
			out = append(out, t)
		}
	}
	return out
}

// Mine appends n blocks; the first carries the queued transfers.
func (f *Fake) Mine(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < n; i++ {
		tip := f.parentRef()
		h := chains.Height(len(f.blocks))
		b := fakeBlock{ref: chains.BlockRef{Height: h, Hash: f.hash(h, tip.Hash), Parent: tip.Hash}, time: f.clock().Add(f.stamp)}
		if i == 0 {
			b.transfers, f.next = f.next, nil
			mined := map[string]bool{}
			for _, t := range b.transfers {
				mined[t.TxID] = true
			}
			var still []chains.Transfer
			for _, t := range f.pending {
				if !mined[t.TxID] {
					still = append(still, t)
				}
			}
			f.pending = still
		}
		f.blocks = append(f.blocks, b)
	}
}

// parentRef is the newest block that is not a skipped slot (the parent of
// the next block). The caller holds f.mu.
func (f *Fake) parentRef() chains.BlockRef {
	for i := len(f.blocks) - 1; i > 0; i-- {
		if !f.blocks[i].skipped {
			return f.blocks[i].ref
		}
	}
	return f.blocks[0].ref
}

// Skip appends a slot without a block (a skipped Solana slot): Block of its
// height returns ErrSkipped and the next block's parent is the block before
// it. Mine after Skip, so that the tip is a block.
func (f *Fake) Skip() {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := chains.Height(len(f.blocks))
	f.blocks = append(f.blocks, fakeBlock{ref: chains.BlockRef{Height: h}, skipped: true})
}

// SetStamp shifts the time of the blocks mined from now on by d from the
// clock (negative: block times that lag, as Bitcoin's may; positive: lead).
func (f *Fake) SetStamp(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stamp = d
}

// ReorgTo replaces the last depth heights by len(blocks) new blocks holding
// the given transfers (with new hashes), as a competing branch that drops,
// keeps or re-orders what the replaced blocks held. The mempool and the
// queue of the next block are left alone: the caller broadcasts what goes
// back to the mempool.
func (f *Fake) ReorgTo(depth int, blocks [][]chains.Transfer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.salt++
	f.blocks = f.blocks[:len(f.blocks)-depth]
	mined := map[string]bool{}
	for _, ts := range blocks {
		tip := f.parentRef()
		h := chains.Height(len(f.blocks))
		f.blocks = append(f.blocks, fakeBlock{ref: chains.BlockRef{Height: h, Hash: f.hash(h, tip.Hash), Parent: tip.Hash},
			time: f.clock().Add(f.stamp), transfers: append([]chains.Transfer(nil), ts...)})
		for _, t := range ts {
			mined[t.TxID] = true
		}
	}
	f.pending = dropMined(f.pending, mined)
	f.next = dropMined(f.next, mined)
}

func dropMined(ts []chains.Transfer, mined map[string]bool) []chains.Transfer {
	out := ts[:0:0]
	for _, t := range ts {
		if !mined[t.TxID] {
			out = append(out, t)
		}
	}
	return out
}

// Chain returns the best chain, every height from genesis (skipped slots
// included), with all transfers of each block.
func (f *Fake) Chain() []FakeBlock {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FakeBlock, len(f.blocks))
	for i, b := range f.blocks {
		out[i] = FakeBlock{BlockRef: b.ref, Time: b.time, Skipped: b.skipped, Transfers: append([]chains.Transfer(nil), b.transfers...)}
	}
	return out
}

// Mempool returns the transfers in the mempool.
func (f *Fake) Mempool() []chains.Transfer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chains.Transfer(nil), f.pending...)
}

// Reorg replaces the last depth blocks by depth+extra new blocks. The
// replaced blocks' transfers go back to the mempool when keep is true (as
// Bitcoin does), and vanish otherwise (as anvil_reorg does).
func (f *Fake) Reorg(depth, extra int, keep bool) {
	f.mu.Lock()
	f.salt++
	cut := len(f.blocks) - depth
	var dropped []chains.Transfer
	for _, b := range f.blocks[cut:] {
		dropped = append(dropped, b.transfers...)
	}
	f.blocks = f.blocks[:cut]
	if keep {
		f.pending = append(f.pending, dropped...)
		f.next = append(f.next, dropped...)
	}
	f.mu.Unlock()
	// The replacement blocks are empty; queued transfers wait for Mine.
	saved := f.takeNext()
	for i := 0; i < depth+extra; i++ {
		f.Mine(1)
	}
	f.mu.Lock()
	f.next = append(saved, f.next...)
	f.mu.Unlock()
}

func (f *Fake) takeNext() []chains.Transfer {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.next
	f.next = nil
	return n
}

// SetFinal makes FinalizedHeight return tip-lag (lag < 0: always 0).
func (f *Fake) SetFinal(lag int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if lag < 0 {
		f.finalFn = nil
		return
	}
	f.finalFn = func(tip chains.Height) chains.Height {
		if tip < chains.Height(lag) {
			return 0
		}
		return tip - chains.Height(lag)
	}
}

// FailBlock makes Block(h) fail with err until cleared with nil.
func (f *Fake) FailBlock(h chains.Height, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.fail, h)
	} else {
		f.fail[h] = err
	}
}

// FailTip makes Tip fail with err (nil clears), like a node that is down.
func (f *Fake) FailTip(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failTip = err
}

// Fetches counts Block calls (Header calls are counted by Headers).
func (f *Fake) Fetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches
}

// Headers counts Header calls.
func (f *Fake) Headers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers
}

// TipHeight returns the height of the best block.
func (f *Fake) TipHeight() chains.Height {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.blocks[len(f.blocks)-1].ref.Height
}

// Tip implements chains.Source.
func (f *Fake) Tip(ctx context.Context) (chains.Height, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failTip != nil {
		return 0, f.failTip
	}
	return f.blocks[len(f.blocks)-1].ref.Height, nil
}

// FinalizedHeight implements chains.Source.
func (f *Fake) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failTip != nil {
		return 0, f.failTip
	}
	if f.finalFn == nil {
		return 0, nil
	}
	return f.finalFn(f.blocks[len(f.blocks)-1].ref.Height), nil
}

// Block implements chains.Source.
func (f *Fake) Block(ctx context.Context, h chains.Height, w chains.Watched) (chains.Block, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if err := f.fail[h]; err != nil {
		return chains.Block{}, err
	}
	if h >= chains.Height(len(f.blocks)) {
		return chains.Block{}, fmt.Errorf("height %d: %w", h, chains.ErrBlockNotFound)
	}
	b := f.blocks[h]
	if b.skipped {
		return chains.Block{}, fmt.Errorf("slot %d: %w", h, chains.ErrSkipped)
	}
	out := chains.Block{BlockRef: b.ref, Time: b.time}
	for _, t := range b.transfers {
		if w.Contains(t.Key) {
			out.Transfers = append(out.Transfers, t)
		}
	}
	return out, nil
}

// Header implements chains.HeaderSource; a FailBlock error fails it too.
func (f *Fake) Header(ctx context.Context, h chains.Height) (chains.BlockRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.headers++
	if err := f.fail[h]; err != nil {
		return chains.BlockRef{}, err
	}
	if h >= chains.Height(len(f.blocks)) {
		return chains.BlockRef{}, fmt.Errorf("height %d: %w", h, chains.ErrBlockNotFound)
	}
	if f.blocks[h].skipped {
		return chains.BlockRef{}, fmt.Errorf("slot %d: %w", h, chains.ErrSkipped)
	}
	return f.blocks[h].ref, nil
}

// Pending implements chains.PendingSource.
func (f *Fake) Pending(ctx context.Context, w chains.Watched) ([]chains.Transfer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failTip != nil {
		return nil, f.failTip
	}
	var out []chains.Transfer
	for _, t := range f.pending {
		if w.Contains(t.Key) {
			out = append(out, t)
		}
	}
	return out, nil
}
