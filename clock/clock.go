package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock tells the time and waits. Real is the wall clock; Fake is moved by
// a test.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed.
	After(d time.Duration) <-chan time.Time
	// NewTimer returns a timer that fires once after d; Stop it when the
	// wait ends early.
	NewTimer(d time.Duration) *Timer
}

// Timer is a one-shot timer of a Clock.
type Timer struct {
	// C receives the time when the timer fires.
	C    <-chan time.Time
	stop func() bool
}

// Stop prevents the timer from firing; it reports whether it did so (false
// when the timer had already fired or been stopped).
func (t *Timer) Stop() bool { return t.stop() }

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (realClock) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return &Timer{C: t.C, stop: t.Stop}
}

// Or returns c, or Real when c is nil: the default of an optional field.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// Fake is a Clock that stands still until the test moves it. It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeTimer
	// changed is closed (and replaced) whenever a waiter is added or
	// removed, for BlockUntil.
	changed chan struct{}
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

var _ Clock = (*Fake)(nil)

// NewFake returns a fake clock reading t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that receives the fake time once the clock has
// been moved d past now (at once when d <= 0).
func (f *Fake) After(d time.Duration) <-chan time.Time { return f.NewTimer(d).C }

// NewTimer returns a timer that fires when the clock reaches now+d.
func (f *Fake) NewTimer(d time.Duration) *Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeTimer{at: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		w.c <- f.now
		return &Timer{C: w.c, stop: func() bool { return false }}
	}
	f.waiters = append(f.waiters, w)
	f.signal()
	return &Timer{C: w.c, stop: func() bool { return f.remove(w) }}
}

func (f *Fake) remove(w *fakeTimer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			f.signal()
			return true
		}
	}
	return false
}

// signal wakes BlockUntil; f.mu is held.
func (f *Fake) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Advance moves the clock forward by d and fires every timer due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now.Add(d))
}

// Set moves the clock to t (never back: an earlier t only fires nothing)
// and fires every timer due.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t)
}

func (f *Fake) setLocked(t time.Time) {
	if t.After(f.now) {
		f.now = t
	}
	sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
	n := 0
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			break
		}
		w.c <- f.now
		n++
	}
	if n > 0 {
		f.waiters = append(f.waiters[:0], f.waiters[n:]...)
		f.signal()
	}
}

// Waiters returns how many timers are pending.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n timers are pending (a loop under test
// has reached its wait), or ctx ends.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		ok, changed := len(f.waiters) >= n, f.changed
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Stored returns a clock of what is written to the database: now in UTC at
// the microsecond, the precision PostgreSQL keeps. A time a writer puts in
// an event body or an answer is then the one a later read returns (nil
// now: time.Now).
func Stored(now func() time.Time) func() time.Time {
	if now == nil {
		now = time.Now
	}
	return func() time.Time { return now().UTC().Truncate(time.Microsecond) }
}

// Func is a Clock whose Now is the function's time (a skewed instance's, a
// recorded one) and whose waits are the wall clock's.
type Func func() time.Time

// Now returns f's time.
func (f Func) Now() time.Time { return f() }

// After waits on the wall clock.
func (Func) After(d time.Duration) <-chan time.Time { return Real.After(d) }

// NewTimer is a wall-clock timer.
func (Func) NewTimer(d time.Duration) *Timer { return Real.NewTimer(d) }
