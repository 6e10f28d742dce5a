package paywatchtest_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// TestRestartServiceStopsTheServiceItReplaces: a restart stops the
// replaced Service's replenishers (a goroutine per network) and lets its
// daemon go. They used to run until the test ended, so the simulator,
// which restarts once a history, kept every daemon it made: 90 MB of live
// heap after 600 histories, growing without end in a long run, and five
// goroutines more a history (issue 37 item 3).
func TestRestartServiceStopsTheServiceItReplaces(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin, payment.Ethereum))
	v := e.CreateIntent("order", "ORD-RESTART", "", "10.00", "BTC")
	e.RestartService()
	settle := func() int {
		// What a restart stops ends asynchronously only in the Go
		// scheduler's sense: the stop waits for it. Let timers and
		// finished goroutines go.
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	before := settle()
	const restarts = 30
	for range restarts {
		e.RestartService()
	}
	after := settle()
	// Three networks: three replenishers a Service. Kept, 30 restarts
	// would leave 90 goroutines more; a handful is the runtime's noise.
	if after-before > 10 {
		t.Fatalf("%d restarts: %d goroutines before, %d after: the replaced services still run", restarts, before, after)
	}
	// The Service after all those restarts works.
	if got := e.Intent(v.ID); got.ID != v.ID || got.Status != "awaiting_payment" {
		t.Fatalf("after the restarts: %+v", got)
	}
	w := e.CreateIntent("order", "ORD-RESTART-2", "", "10.00", "LTC")
	if w.Address == "" {
		t.Fatal("no address after the restarts")
	}
}
