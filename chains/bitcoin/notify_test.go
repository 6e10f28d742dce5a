package bitcoin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
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

// TestNotifyBtcdIsUnsupported: btcd has no waitfornewblock; the scanner
// polls it.
func TestNotifyBtcdIsUnsupported(t *testing.T) {
	c := startBtcdChain(t)
	err := c.src.Notify(testCtx(t), func() { t.Error("woken") })
	if !errors.Is(err, chains.ErrNotifyUnsupported) {
		t.Fatalf("Notify against btcd = %v, want ErrNotifyUnsupported", err)
	}
}
