package intents_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// countingSchedule fires every 20ms and counts the times it was asked for.
type countingSchedule struct {
	mu    sync.Mutex
	asked int
}

func (s *countingSchedule) Next(t time.Time) time.Time {
	s.mu.Lock()
	s.asked++
	s.mu.Unlock()
	return t.Add(20 * time.Millisecond)
}

func (s *countingSchedule) times() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

// The deadline sweep runs on its schedule inside the core (the daemon runs
// it), timed by the service's clock: nothing runs while the clock stands
// still, each tick of the schedule is one run, and an intent past its
// deadline is expired by the next run without anyone calling Sweep.
// RunSweeps returns nil when its context ends.
func TestRunSweepsExpiresOnSchedule(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum))
	v := e.CreateIntent("order", "ORD-SWEEPS", "", "10.00", "ETH")
	ctx, cancel := context.WithCancel(context.Background())
	sched := &countingSchedule{}
	done := make(chan error, 1)
	go func() { done <- e.Service.RunSweeps(ctx, sched) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunSweeps: %v", err)
		}
	}()
	waiting := func() {
		t.Helper()
		wctx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		if err := e.Clock.BlockUntil(wctx, 1); err != nil {
			t.Fatalf("RunSweeps does not wait on the clock: %v", err)
		}
	}
	waiting()
	time.Sleep(50 * time.Millisecond) // the wall clock moves; the service's does not
	if n := sched.times(); n != 1 {
		t.Fatalf("the schedule was asked %d times while the clock stood still", n)
	}
	for i := 2; i <= 4; i++ {
		e.Clock.Advance(20 * time.Millisecond)
		deadline := time.Now().Add(10 * time.Second)
		for sched.times() < i {
			if time.Now().After(deadline) {
				t.Fatalf("tick %d: no run", i)
			}
			time.Sleep(time.Millisecond)
		}
		waiting()
	}
	if got := e.Intent(v.ID); got.Status != "awaiting_payment" {
		t.Fatalf("status %s before the deadline, want awaiting_payment", got.Status)
	}
	e.Clock.Advance(31 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for e.Intent(v.ID).Status != "expired" {
		if time.Now().After(deadline) {
			t.Fatalf("not expired 10s after its deadline passed: %+v (schedule asked %d times)", e.Intent(v.ID), sched.times())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
