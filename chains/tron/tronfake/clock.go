package tronfake

import (
	"encoding/hex"
	"fmt"
	"time"
)

// MineAt appends one block stamped t (carrying every pending payment, like
// Mine); later blocks follow it 3 s apart. It lets a test put block times on
// its own clock (a payment first seen before or after a deadline). t must
// be later than the head block's time.
func (n *Node) MineAt(t time.Time) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	tip := n.blocks[n.tipLocked()]
	ts := t.UnixMilli()
	if ts <= tip.timestamp {
		return fmt.Errorf("tronfake: MineAt %s is not after the head block's time %s",
			t.UTC(), time.UnixMilli(tip.timestamp).UTC())
	}
	id, _ := hex.DecodeString(tip.id)
	b := n.build(tip.number+1, id, ts, n.pending)
	n.pending = nil
	n.put(b)
	return nil
}
