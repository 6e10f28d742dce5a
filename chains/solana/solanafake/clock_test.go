package solanafake

import (
	"testing"
	"time"

	"github.com/paywatch/paywatch/clock"
)

// NewOn gives blocks its clock's time in whole seconds (the sandbox gives it
// the wall clock), never before the parent's; New keeps the cluster's own
// time.
func TestNewOnStampsBlocksWithTheClock(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	fc := clock.NewFake(t0)
	n := NewOn(fc)
	blockTime := func(slot uint64) int64 {
		n.mu.Lock()
		defer n.mu.Unlock()
		return *n.blocks[slot].time
	}
	if got := blockTime(0); got != t0.Unix() {
		t.Fatalf("slot 0 at %d, want %d", got, t0.Unix())
	}
	fc.Advance(90 * time.Second)
	n.Mine(3)
	for s := uint64(1); s <= 3; s++ {
		if got := blockTime(s); got != t0.Unix()+90 {
			t.Fatalf("slot %d at %d, want %d", s, got, t0.Unix()+90)
		}
	}
	if got := *New().blocks[0].time; got != 1_700_000_000 {
		t.Fatalf("New's slot 0 at %d", got)
	}
}
