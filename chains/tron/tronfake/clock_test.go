package tronfake

import (
	"encoding/hex"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paywatch/paywatch/clock"
)

// NewOn stamps blocks with its clock's time (the sandbox gives it the wall
// clock), never at or before the parent's; New keeps the chain's own time.
func TestNewOnStampsBlocksWithTheClock(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	fc := clock.NewFake(t0)
	n := NewOn(fc)
	stamp := func(h uint64) int64 {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.blocks[h].timestamp
	}
	if got := stamp(0); got != t0.UnixMilli() {
		t.Fatalf("genesis at %d, want %d", got, t0.UnixMilli())
	}
	fc.Advance(90 * time.Second)
	n.Mine(1)
	if got := stamp(1); got != t0.Add(90*time.Second).UnixMilli() {
		t.Fatalf("block 1 at %s, want %s", time.UnixMilli(got).UTC(), t0.Add(90*time.Second))
	}
	// Blocks mined at one instant stay strictly ordered.
	n.Mine(2)
	if stamp(2) != stamp(1)+1 || stamp(3) != stamp(2)+1 {
		t.Fatalf("blocks mined at once: %d %d %d", stamp(1), stamp(2), stamp(3))
	}
	if New().blocks[0].timestamp != genesisTime {
		t.Fatal("New's genesis moved")
	}
}

// java-tron's broadcast (Wallet.broadcastTransaction) checks the expiration
// against the next slot before Manager.pushTransaction's duplicate check
// (validateDup, after validateCommon's expiration): a mined transaction
// replayed within its expiration is DUP_TRANSACTION_ERROR, replayed after it
// TRANSACTION_EXPIRATION_ERROR. Chain time, not the test's speed, decides.
func TestReplayAnswersExpirationBeforeDuplicate(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	c := walletClient{t, srv}
	alice, bob := newTestKey("alice"), newTestKey("bob")
	n.Fund(alice.addr, 1_000_000_000)
	n.Fund(bob.addr, 1)
	n.Mine(3)
	tx := c.post("/wallet/createtransaction", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "to_address": hex.EncodeToString(bob.addr), "amount": 1_000})
	if got := c.broadcast(tx, alice); got["result"] != true {
		t.Fatalf("broadcast: %v", got)
	}
	n.Mine(1)
	// Mined, 3 s of chain time later: a duplicate.
	refused(t, c.broadcast(tx, alice), codeDup, "Dup transaction.")
	// 57 s later the next slot is the expiration itself: still a duplicate.
	n.Mine(18)
	refused(t, c.broadcast(tx, alice), codeDup, "Dup transaction.")
	// One slot more and the next slot is past the expiration.
	n.Mine(1)
	refused(t, c.broadcast(tx, alice), codeExpiration, "Transaction expired")
	if got := n.Balance(bob.addr); got != 1+1_000 {
		t.Fatalf("bob: %d, the replays changed the balance", got)
	}
}
