package solanafake

import (
	"fmt"
	"time"
)

// MineAt produces one new slot with a block whose blockTime is t (whole
// seconds), carrying every pending payment like Mine; later slots follow it
// 0.4 s apart. It lets a test put block times on its own clock. t must not
// be before the newest block's time.
func (n *Node) MineAt(t time.Time) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	ts := t.Unix()
	if n.last.time != nil && ts < *n.last.time {
		return fmt.Errorf("solanafake: MineAt %s is before the newest block's time %s",
			t.UTC(), time.Unix(*n.last.time, 0).UTC())
	}
	n.tip++
	b := n.newBlock(n.tip)
	b.time = &ts
	for _, p := range n.pending {
		n.includePendingLocked(b, p)
	}
	n.pending = nil
	n.notifySignaturesLocked()
	return nil
}
