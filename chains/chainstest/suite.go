package chainstest

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// Chain drives one network (a real regtest node or a faithful fake) for the
// conformance suite. Every method fails the test itself on error.
type Chain interface {
	// Source is the client under test.
	Source() chains.Source
	// NewAddress returns a fresh receiving address that only this test knows,
	// with its binary watch key.
	NewAddress(t *testing.T) (key []byte, address string)
	// Pay sends amount base units of asset to address and mines it into a
	// block; it returns the transaction id as the Source reports it.
	Pay(t *testing.T, address string, asset payment.Asset, amount *big.Int) (txid string)
	// Mine produces n empty (or unrelated) blocks.
	Mine(t *testing.T, n int)
	// Reorg replaces the last depth blocks by as many new blocks that do not
	// contain the transactions of the replaced ones.
	Reorg(t *testing.T, depth int)
	// Asset is the asset the suite pays with (payment.Native for most chains).
	Asset() payment.Asset
	// Amount is a small amount the suite can pay several times.
	Amount() *big.Int
}

// keys is a chains.Watched over explicit keys.
type keys map[string]bool

func (k keys) Contains(key []byte) bool { return k[string(key)] }

// Run runs the conformance suite against c: each property is its own
// subtest, which sets up what it checks (mines, pays) and relies on no
// other having run first. The whole suite shares one two-minute deadline.
func Run(t *testing.T, c Chain) {
	deadline := time.Now().Add(2 * time.Minute)
	for _, p := range properties {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithDeadline(t.Context(), deadline)
			defer cancel()
			p.check(ctx, t, c)
		})
	}
}

// properties are the suite's subtests, in the order Run runs them.
var properties = []struct {
	name  string
	check func(ctx context.Context, t *testing.T, c Chain)
}{
	{"HeightsLinkByParentHash", heightsLinkByParentHash},
	{"HeaderMatchesBlock", headerMatchesBlock},
	{"AboveTipIsNotFound", aboveTipIsNotFound},
	{"PaymentToWatchedKeyAppearsOnceExactly", paymentAppearsOnceExactly},
	{"ReorgChangesHash", reorgChangesHash},
	{"FinalizedNotAboveTip", finalizedNotAboveTip},
}

// heightsLinkByParentHash: the block at the tip names the one below it as
// its parent, and both carry their own heights and distinct hashes.
func heightsLinkByParentHash(ctx context.Context, t *testing.T, c Chain) {
	src := c.Source()
	c.Mine(t, 3)
	tip := mustTip(ctx, t, src)
	prev, err := src.Block(ctx, tip-1, keys{})
	if err != nil {
		t.Fatalf("Block(%d): %v", tip-1, err)
	}
	cur, err := src.Block(ctx, tip, keys{})
	if err != nil {
		t.Fatalf("Block(%d): %v", tip, err)
	}
	if cur.Height != tip || prev.Height != tip-1 {
		t.Fatalf("heights: got %d and %d, want %d and %d", prev.Height, cur.Height, tip-1, tip)
	}
	if cur.Parent != prev.Hash || cur.Hash == "" || cur.Hash == prev.Hash {
		t.Fatalf("block %d parent %q, hash %q; block %d hash %q", tip, cur.Parent, cur.Hash, tip-1, prev.Hash)
	}
}

// headerMatchesBlock: the source has Header, and it answers what Block
// says (a skipped slot and a height above the tip alike).
func headerMatchesBlock(ctx context.Context, t *testing.T, c Chain) {
	src := c.Source()
	hs, ok := src.(chains.HeaderSource)
	if !ok {
		t.Fatalf("%T has no Header: the walk-back would fetch whole blocks", src)
	}
	c.Mine(t, 2)
	tip := mustTip(ctx, t, src)
	for h := tip - 1; h <= tip; h++ {
		b, err := src.Block(ctx, h, keys{})
		if errors.Is(err, chains.ErrSkipped) {
			if _, err := hs.Header(ctx, h); !errors.Is(err, chains.ErrSkipped) {
				t.Fatalf("Header(%d) of a skipped slot = %v, want ErrSkipped", h, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Block(%d): %v", h, err)
		}
		ref, err := hs.Header(ctx, h)
		if err != nil || ref != b.BlockRef {
			t.Fatalf("Header(%d) = %+v, %v; Block says %+v", h, ref, err, b.BlockRef)
		}
	}
	if _, err := hs.Header(ctx, tip+1000); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Header(tip+1000) = %v, want ErrBlockNotFound", err)
	}
}

// aboveTipIsNotFound: a height not produced yet is ErrBlockNotFound.
func aboveTipIsNotFound(ctx context.Context, t *testing.T, c Chain) {
	src := c.Source()
	tip := mustTip(ctx, t, src)
	_, err := src.Block(ctx, tip+1000, keys{})
	if !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Block(tip+1000) = %v, want ErrBlockNotFound", err)
	}
}

// paymentAppearsOnceExactly: of two payments, only the one to the watched
// key is reported, once, with its txid, amount, asset and address.
func paymentAppearsOnceExactly(ctx context.Context, t *testing.T, c Chain) {
	src := c.Source()
	key, addr := c.NewAddress(t)
	otherKey, otherAddr := c.NewAddress(t)
	amount := c.Amount()
	txid := c.Pay(t, addr, c.Asset(), amount)
	c.Pay(t, otherAddr, c.Asset(), amount)
	tip := mustTip(ctx, t, src)
	w := keys{string(key): true}
	var found []chains.Transfer
	for h := tip; h+10 > tip && h > 0; h-- {
		b, err := src.Block(ctx, h, w)
		if errors.Is(err, chains.ErrSkipped) {
			continue
		}
		if err != nil {
			t.Fatalf("Block(%d): %v", h, err)
		}
		for _, tr := range b.Transfers {
			if string(tr.Key) == string(otherKey) {
				t.Fatalf("block %d reports a transfer to an unwatched key: %+v", h, tr)
			}
			if string(tr.Key) == string(key) {
				found = append(found, tr)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("found %d transfers to the watched key in the last 10 blocks, want 1: %+v", len(found), found)
	}
	got := found[0]
	if got.TxID != txid || got.Amount.Cmp(amount) != 0 || got.Asset != c.Asset() || got.Address != addr {
		t.Fatalf("transfer = %+v (amount %s), want txid %s amount %s asset %s address %s",
			got, got.Amount, txid, amount, c.Asset(), addr)
	}
}

// reorgChangesHash: after a reorg the block at the old tip height is
// another block.
func reorgChangesHash(ctx context.Context, t *testing.T, c Chain) {
	src := c.Source()
	c.Mine(t, 2)
	tip := mustTip(ctx, t, src)
	before, err := src.Block(ctx, tip, keys{})
	if err != nil {
		t.Fatalf("Block(%d): %v", tip, err)
	}
	c.Reorg(t, 1)
	// The replacement chain may be longer; the block at the old tip height
	// must be a different one.
	waitFor(ctx, t, func() bool {
		after, err := src.Block(ctx, tip, keys{})
		return err == nil && after.Hash != before.Hash
	})
}

// finalizedNotAboveTip: the finalized height never exceeds the tip.
func finalizedNotAboveTip(ctx context.Context, t *testing.T, c Chain) {
	src := c.Source()
	tip := mustTip(ctx, t, src)
	fin, err := src.FinalizedHeight(ctx)
	if err != nil {
		t.Fatalf("FinalizedHeight: %v", err)
	}
	if fin > tip {
		t.Fatalf("finalized height %d above tip %d", fin, tip)
	}
}

func mustTip(ctx context.Context, t *testing.T, src chains.Source) chains.Height {
	t.Helper()
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatalf("Tip: %v", err)
	}
	return tip
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("condition not met before timeout")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
