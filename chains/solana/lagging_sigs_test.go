package solana_test

import (
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
)

// route sends getSignaturesForAddress to node (nil: the cluster's own).
func (s *solScan) route(node *solanafake.Node) {
	s.cluster.mu.Lock()
	s.cluster.sigs = node
	s.cluster.mu.Unlock()
}

// Issue 27, hole 1: address mode behind a load balancer that sends
// getSignaturesForAddress to a node behind the finalized slot. Its short
// list must not be taken for "no payments": the cursor stays until the node
// has the range (minContextSlot), and the payment is recorded.
func TestScanSolanaSignaturesFromLaggingNode(t *testing.T) {
	s := newSolScan(t, solana.ModeAddress)
	// The lagging node: the same chain as the cluster's, produced by the
	// same operations (the fake is deterministic), a few slots behind.
	lag := solanafake.New()
	start := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	if err := lag.MineAt(start.Add(-10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	lag.Mine(10)
	v := s.CreateIntent("order", "SOL-LB", "", "10.00", "SOL")
	s.sync()
	s.route(lag)
	sig := s.pay(v, lamports(v))
	s.mine(1)
	before := s.cursor()
	for range 3 {
		_ = s.step() // the lagging node's answer is an error, or nothing moves
	}
	if c := s.cursor(); c.Height > before.Height {
		t.Fatalf("cursor moved from %d to %d on the word of a node at slot %d", before.Height, c.Height, lag.Tip())
	}
	// The lagging node catches up (same payment, same slot time).
	if got := lag.PaySOL(s.payer, s.key(v), lamports(v), false, false); got != sig {
		t.Fatalf("the lagging node's copy diverged: %s != %s", got, sig)
	}
	if err := lag.MineAt(s.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	s.mine(1)
	if err := lag.MineAt(s.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	s.sync()
	if got := s.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].TxID != sig {
		t.Fatalf("after the node caught up: %s %+v", got.Status, got.Transfers)
	}
}

// A signature a node lists only after the scan passed its slot (its slot is
// below the next poll's from) is still recorded: the scanner replays from
// its slot.
func TestScanSolanaSignatureListedLateIsRecorded(t *testing.T) {
	s := newSolScan(t, solana.ModeAddress)
	v := s.CreateIntent("order", "SOL-LATE", "", "10.00", "SOL")
	half := lamports(v) / 2
	s.pay(v, half)
	s.mine(1)
	s.sync()
	if got := s.Intent(v.ID); len(got.Transfers) != 1 {
		t.Fatalf("first half: %+v", got.Transfers)
	}
	// A node that has every slot but not yet this address's new signature.
	blind := solanafake.New()
	blind.Mine(1000)
	s.route(blind)
	sig := s.pay(v, lamports(v)-half)
	s.mine(1)
	s.sync()
	passed := s.cursor()
	if got := s.Intent(v.ID); len(got.Transfers) != 1 {
		t.Fatalf("the blind node listed the payment: %+v", got.Transfers)
	}
	s.route(nil)
	s.mine(1)
	s.sync()
	got := s.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 || got.Transfers[1].TxID != sig {
		t.Fatalf("signature listed after the cursor passed slot %d: %s %+v", passed.Height, got.Status, got.Transfers)
	}
	if c := s.cursor(); uint64(c.Height) != s.node.Tip() {
		t.Fatalf("cursor %d after the replay, tip %d", c.Height, s.node.Tip())
	}
}
