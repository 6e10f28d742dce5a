package bitcoin

import (
	"context"
	"testing"
	"time"
)

// TestNotifyLitecoindWakesOnBlocks: the waitfornewblock long-poll wakes on
// each mined block, not on its own timeouts, and ends cleanly with ctx.
func TestNotifyLitecoindWakesOnBlocks(t *testing.T) {
	c := startLitecoindChain(t, false)
	ctx, cancel := context.WithCancel(testCtx(t))
	wakes := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() { done <- c.src.Notify(ctx, func() { wakes <- struct{}{} }) }()
	for i := 0; i < 2; i++ {
		// Mine until a wake arrives: the first long-poll may not be
		// waiting yet when the first block is mined.
		for woken := false; !woken; {
			c.Mine(t, 1)
			select {
			case <-wakes:
				woken = true
			case <-time.After(2 * time.Second):
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Notify after cancel: %v", err)
	}
}

// TestNotifyBtcdWakesOnBlocksAndTransactions: btcd answers waitfornewblock
// with "Method not found", so Notify subscribes on its websocket instead:
// a mined block and a broadcast transaction each wake, and Notify ends
// cleanly with ctx. (btcd used to be ErrNotifyUnsupported, polled only.)
func TestNotifyBtcdWakesOnBlocksAndTransactions(t *testing.T) {
	c := startBtcdChain(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	notes := make(chan string, 1000)
	done := make(chan error, 1)
	go func() { done <- c.src.wsFeed().Watch(ctx, func(m string) { notes <- m }) }()
	waitNote := func(want string, poke func()) {
		t.Helper()
		for tries := 0; ; tries++ {
			if tries == 30 {
				t.Fatalf("no %s after 30 tries", want)
			}
			poke() // again: the subscription may not be up yet
			deadline := time.After(2 * time.Second)
		wait:
			for {
				select {
				case m := <-notes:
					if m == want {
						return
					}
				case err := <-done:
					t.Fatalf("Notify ended waiting for %s: %v", want, err)
				case <-deadline:
					break wait
				}
			}
		}
	}
	waitNote("blockconnected", func() { c.Mine(t, 1) })
	var payments int
	waitNote("txaccepted", func() {
		_, addr := c.NewAddress(t)
		if _, err := c.node.Pay(testCtx(t), c.script(t, addr), 10_000); err != nil {
			t.Fatal(err)
		}
		payments++
	})
	if payments != 1 {
		t.Errorf("%d broadcasts before a txaccepted, want 1 (the subscription was up)", payments)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Notify after cancel: %v", err)
	}
}

// TestNotifyBtcdThroughNotify: the public Notify finds btcd's websocket by
// itself (waitfornewblock is "Method not found" there) and wakes on a block.
func TestNotifyBtcdThroughNotify(t *testing.T) {
	c := startBtcdChain(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	wakes := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() { done <- c.src.Notify(ctx, func() { wakes <- struct{}{} }) }()
	for woken := false; !woken; {
		c.Mine(t, 1)
		select {
		case <-wakes:
			woken = true
		case err := <-done:
			t.Fatalf("Notify against btcd: %v", err)
		case <-time.After(2 * time.Second):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Notify after cancel: %v", err)
	}
}
