package ingest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// leading records when each leader leads.
type leading struct {
	mu  sync.Mutex
	now map[string]bool
	max int // most leaders leading at once
}

func (l *leading) set(name string, yes bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now[name] = yes
	n := 0
	for _, y := range l.now {
		if y {
			n++
		}
	}
	l.max = max(l.max, n)
}

func (l *leading) is(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now[name]
}

// Two instances run a leader of one network over one database: one holds
// the lease and scans (the cursor follows the chain), the other stands by
// and never leads at the same time; when the leader stops, the standby
// takes the lease and scans from where the first left off.
func TestLeaderScansOnlyUnderTheLeaseAndAStandbyTakesOver(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	chain := e.Chains[payment.Bitcoin]
	nc := e.Config.Networks["bitcoin"]
	rec := &leading{now: map[string]bool{}}
	leader := func(name string) *ingest.Leader {
		return &ingest.Leader{Store: e.Store, Sink: e.Sink, Source: chain, Watch: chains.NewWatchSet(64), Retry: 20 * time.Millisecond,
			Scanner: chains.ScannerConfig{Network: payment.Bitcoin, Chain: nc.Chain, PollInterval: 10 * time.Millisecond,
				SafetyDepth: nc.SafetyDepth},
			Leading: func(yes bool) { rec.set(name, yes) }}
	}
	run := func(l *ingest.Leader) (cancel func()) {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		return func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("leader: %v", err)
			}
		}
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("after 15s: %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	scanned := func(h chains.Height) func() bool {
		return func() bool {
			c, err := e.Store.GetCursor(t.Context(), "bitcoin")
			return err == nil && c.Height >= int64(h)
		}
	}

	stopA := run(leader("a"))
	waitFor("a leads", func() bool { return rec.is("a") })
	stopB := run(leader("b"))
	defer stopB()
	chain.Mine(3)
	waitFor("a scans to the tip", scanned(chain.TipHeight()))
	time.Sleep(100 * time.Millisecond) // b tries for the lease about five times
	if rec.is("b") {
		t.Fatal("the standby leads while the leader holds the lease")
	}

	stopA()
	if rec.is("a") {
		t.Fatal("a stopped but still counts as leading")
	}
	waitFor("b takes over", func() bool { return rec.is("b") })
	chain.Mine(2)
	waitFor("b scans to the new tip", scanned(chain.TipHeight()))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.max != 1 {
		t.Fatalf("%d leaders led at once", rec.max)
	}
}

// TestALeaderWhoseLeaseWasTakenStandsByAtItsNextQuietStep: with nothing to
// scan a step writes only the scanner's health, and that write, fenced,
// stands the old leader by at its next poll, long before its lease watch
// would renew (a TTL of an hour renews every twenty minutes). The lease is
// taken over behind its back, as a standby does after a freeze.
func TestALeaderWhoseLeaseWasTakenStandsByAtItsNextQuietStep(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	chain := e.Chains[payment.Bitcoin]
	nc := e.Config.Networks["bitcoin"]
	rec := &leading{now: map[string]bool{}}
	l := &ingest.Leader{Store: e.Store, Sink: e.Sink, Source: chain, Watch: chains.NewWatchSet(64), Retry: time.Hour, TTL: time.Hour,
		Scanner: chains.ScannerConfig{Network: payment.Bitcoin, Chain: nc.Chain, PollInterval: 10 * time.Millisecond, SafetyDepth: nc.SafetyDepth},
		Leading: func(yes bool) { rec.set("a", yes) }}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("leader: %v", err)
		}
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("after 15s: %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("a leads and scans to the tip", func() bool {
		c, err := e.Store.GetCursor(t.Context(), "bitcoin")
		return rec.is("a") && err == nil && c.Height >= int64(chain.TipHeight())
	})
	// Three more steps recorded their health: the first at the tip wrote
	// the node's tips, the ones after it nothing but their health.
	// (Each health record rewrites the cursor's row: a new xmin; the test
	// clock stands still, so updated_at does not say it.)
	var seen []string
	waitFor("a steps at the tip", func() bool {
		var x string
		err := e.Store.Pool().QueryRow(t.Context(), `SELECT xmin::text FROM cursors WHERE network = 'bitcoin'`).Scan(&x)
		if err == nil && (len(seen) == 0 || x != seen[len(seen)-1]) {
			seen = append(seen, x)
		}
		return len(seen) > 3
	})
	if _, err := e.Store.Pool().Exec(t.Context(), `UPDATE leases SET holder = 'b', token = token + 1 WHERE name = $1`,
		ingest.LeaseName(payment.Bitcoin)); err != nil {
		t.Fatal(err)
	}
	waitFor("a stands by", func() bool { return !rec.is("a") })
}
