package solana

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
)

// keyLister is the watched set as address mode needs it: its size decides
// the mode in ModeAuto, and every key is polled.
type keyLister interface {
	Len() int
	Keys() [][]byte
}

// ModeSource is the Client as the daemon's scanner uses it: a chains.Source
// that reads every finalized block in ModeBlock and, in ModeAddress (or
// ModeAuto below the threshold), a chains.SparseSource that finds the blocks
// holding credits to watched keys with Poll and reads only their headers.
// Its tip (the finalized slot) never moves back.
//
// Address mode keeps, in memory, the newest signature seen per address and
// the credits found but not yet below the scanner's cursor; both are only an
// optimization: after a restart each address's signatures are listed again
// down to the cursor's slot (older ones are neither paged nor read), so
// nothing is lost or applied twice (the cursor in the database is the only
// truth). The mode needs a watched
// set that can list its keys (chains.WatchSet); any other set is scanned
// block by block.
type ModeSource struct {
	*Client

	hmu     sync.Mutex
	highest chains.Height // highest finalized slot seen

	mu    sync.Mutex
	since map[string]string         // address → newest signature polled
	found map[uint64][]SlotTransfer // slot → credits not yet below the cursor
	inUse string
}

// The scanner's source for Solana: the Client's capabilities and the
// sparse catch-up (chains/capabilities.go).
var (
	_ chains.Source       = (*ModeSource)(nil)
	_ chains.HeaderSource = (*ModeSource)(nil)
	_ chains.Notifier     = (*ModeSource)(nil)
	_ chains.SparseSource = (*ModeSource)(nil)
	_ chains.SparseMode   = (*ModeSource)(nil)
)

// NewModeSource returns c as a scanner source.
func NewModeSource(c *Client) *ModeSource {
	return &ModeSource{Client: c, since: map[string]string{}, found: map[uint64][]SlotTransfer{}}
}

// Tip returns the highest finalized slot (the scanner never reads below
// finalized, so it is the tip), never lower than one already seen: a
// finalized slot cannot go back, so a lower answer comes from a lagging node
// behind a load balancer and must not look like a reorg to the scanner.
func (m *ModeSource) Tip(ctx context.Context) (chains.Height, error) { return m.finalized(ctx) }

// FinalizedHeight is Tip: the highest finalized slot seen.
func (m *ModeSource) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	return m.finalized(ctx)
}

func (m *ModeSource) finalized(ctx context.Context) (chains.Height, error) {
	// The Client's Tip: the finalized slot, which a pool records as the
	// head of the endpoint that answered it.
	slot, err := m.Client.Tip(ctx)
	if err != nil {
		return 0, err
	}
	m.hmu.Lock()
	defer m.hmu.Unlock()
	if slot < m.highest {
		m.log.Debug("solana node behind the finalized slot already seen", "slot", slot, "highest", m.highest)
		return m.highest, nil
	}
	m.highest = slot
	return slot, nil
}

// InUse returns the mode of the last catch-up (ModeBlock or ModeAddress),
// or, before any, the mode an empty watched set would get.
func (m *ModeSource) InUse() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inUse == "" {
		return m.Mode(0)
	}
	return m.inUse
}

// Sparse reports whether w is scanned in address mode now, and records the
// decision for InUse.
func (m *ModeSource) Sparse(w chains.Watched) bool {
	mode := ModeBlock
	if l, ok := w.(keyLister); ok {
		mode = m.Mode(l.Len())
	}
	m.mu.Lock()
	m.inUse = mode
	m.mu.Unlock()
	return mode == ModeAddress
}

// SparseBlocks polls every watched address (Poll), keeps the credits at or
// above from, and returns the blocks in [from, to] that hold them, followed
// by the newest block at or below to, each with its real slot, blockhash
// and time (getBlock with transactionDetails "none"), linked as
// chains.SparseSource describes. Credits in slots above to (finalized after
// the tip was read) are kept for the next call.
func (m *ModeSource) SparseBlocks(ctx context.Context, low, high chains.Height, parent string, w chains.Watched) ([]chains.Block, error) {
	from, to := uint64(low), uint64(high)
	l, ok := w.(keyLister)
	if !ok {
		return nil, errors.New("solana: address mode needs a watched set that lists its keys")
	}
	// Behind a pool of endpoints, every read goes to one endpoint that
	// showed slot to finalized: the signature lists' minContextSlot is
	// then one it meets, and a list short of the newest slots (a lagging
	// endpoint's) never comes from an endpoint not asked to reach them.
	ctx = endpoints.Pin(ctx, int64(to))
	m.mu.Lock()
	defer m.mu.Unlock()
	var found, late []SlotTransfer
	var since map[string]string
	var err error
	for {
		found, late, since, err = m.poll(ctx, l.Keys(), m.since, from, to)
		if endpoints.Again(ctx, err, "signatures or transactions missing up to a slot it showed finalized") {
			continue
		}
		break
	}
	if err != nil {
		return nil, err
	}
	m.since = since
	if len(late) > 0 {
		// Signatures a node listed only after the cursor passed their
		// slots: keep their credits and have the scanner replay from the
		// lowest (chains.RescanError); the next call applies them.
		lowest := late[0].Slot
		for _, t := range late {
			lowest = min(lowest, t.Slot)
			if !containsTransfer(m.found[t.Slot], t) {
				m.found[t.Slot] = append(m.found[t.Slot], t)
			}
		}
		for _, t := range found {
			if t.Slot >= from && !containsTransfer(m.found[t.Slot], t) {
				m.found[t.Slot] = append(m.found[t.Slot], t)
			}
		}
		m.log.Warn("solana signatures listed late, below the scanned slot: rescanning", "credits", len(late), "from", lowest)
		return nil, &chains.RescanError{From: chains.Height(lowest), Reason: fmt.Sprintf("%d credit(s) listed by the node only after the scan passed slot %d", len(late), lowest)}
	}
	for slot := range m.found {
		if slot < from {
			delete(m.found, slot) // applied, or below where the scan started
		}
	}
	for _, t := range found {
		if t.Slot < from || containsTransfer(m.found[t.Slot], t) {
			continue
		}
		m.found[t.Slot] = append(m.found[t.Slot], t)
	}
	var slots []uint64
	for slot := range m.found {
		if slot <= to {
			slots = append(slots, slot)
		}
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	out := make([]chains.Block, 0, len(slots)+1)
	prev := parent
	for _, slot := range slots {
		b, err := m.header(ctx, slot)
		if err != nil {
			return nil, err
		}
		for _, t := range m.found[slot] {
			b.Transfers = append(b.Transfers, t.Transfer)
		}
		b.Parent, prev = prev, b.Hash
		out = append(out, b)
	}
	if len(slots) == 0 || slots[len(slots)-1] != to {
		low := from
		if len(slots) > 0 {
			low = slots[len(slots)-1] + 1
		}
		if b, ok, err := m.newestAtOrBelow(ctx, low, to); err != nil {
			return nil, err
		} else if ok {
			b.Parent = prev
			out = append(out, b)
		}
	}
	return out, nil
}

func containsTransfer(ts []SlotTransfer, t SlotTransfer) bool {
	for _, x := range ts {
		if x.TxID == t.TxID && x.Index == t.Index {
			return true
		}
	}
	return false
}

// newestAtOrBelow returns the header of the newest block in [low, to].
func (m *ModeSource) newestAtOrBelow(ctx context.Context, low, to uint64) (chains.Block, bool, error) {
	if to < low {
		return chains.Block{}, false, nil
	}
	b, err := m.header(ctx, to)
	if err == nil {
		return b, true, nil
	}
	if !errors.Is(err, chains.ErrSkipped) {
		return chains.Block{}, false, err
	}
	slots, err := m.Slots(ctx, low, to)
	if err != nil || len(slots) == 0 {
		return chains.Block{}, false, err
	}
	b, err = m.header(ctx, slots[len(slots)-1])
	return b, err == nil, err
}

// headerParams is getBlock without transactions or rewards: the block's
// hashes, parent slot, height and time only.
func headerParams(slot uint64) []any {
	return []any{slot, rpc.M{
		"commitment":                     rpc.CommitmentFinalized,
		"encoding":                       "json",
		"maxSupportedTransactionVersion": rpc.MaxSupportedTransactionVersion0,
		"rewards":                        false,
		"transactionDetails":             rpc.TransactionDetailsNone,
	}}
}

// header reads the finalized block at slot without its transactions; an
// endpoint of a pool that showed the slot and cannot serve it is turned
// away (endpoints.Again).
func (m *ModeSource) header(ctx context.Context, slot uint64) (chains.Block, error) {
	for {
		b, err := m.headerOnce(ctx, slot)
		if !errors.Is(err, chains.ErrSkipped) && endpoints.Again(ctx, err, "block not available at a slot it showed finalized") {
			continue
		}
		return b, err
	}
}

func (m *ModeSource) headerOnce(ctx context.Context, slot uint64) (chains.Block, error) {
	var b chains.Block
	err := m.call(ctx, "getBlock", headerParams(slot), func(body []byte) error {
		var err error
		b, err = decodeBlock(slot, body, keySet{})
		return err
	})
	if err != nil {
		return chains.Block{}, fmt.Errorf("header: %w", m.confirmSkip(ctx, slot, classify(err, "getBlock", slot)))
	}
	return b, nil
}
