package chains_test

import (
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A rescan requested just before a reorg that replaced blocks at and below
// its start height: the replay must start from the common ancestor, so that
// what the replaced blocks held is orphaned (the rescan used to take the
// node's new block at from-1 as a given and never look below it). Found by
// the simulator (sim-findings F7).
func TestRescanAcrossAReorgBelowItsStartOrphansTheReplacedBlocks(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("topup", "TOP-RS1", "cust-rs1", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "rs1") // block 2
	f.Mine(2)
	e.Sync(payment.Bitcoin)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("status %s, want paid", got.Status)
	}
	tip := cursorHeight(t, e, payment.Bitcoin)
	if st, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int64{"from_height": tip}); st != 202 {
		t.Fatalf("rescan: %d %s", st, body)
	}
	// Heights 2..tip are replaced, the payment is gone; the scanner sees the
	// rescan request first.
	f.Reorg(int(tip)-1, 0, false)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "reverted" || got.Transfers[0].Status != "orphaned" {
		t.Fatalf("after the rescan across the reorg: intent %s, transfer %s in block %v", got.Status, got.Transfers[0].Status, got.Transfers[0].BlockHeight)
	}
	if n := count(t, e, "SELECT count(*) FROM ledger_entries WHERE intent_id = $1 AND type = 'reversal'", v.ID); n != 1 {
		t.Fatalf("%d reversal entries, want 1", n)
	}
}
