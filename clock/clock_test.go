package clock_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paywatch/paywatch/clock"
)

func TestBackoffGrowsCapsAndJittersWithinBounds(t *testing.T) {
	b := clock.Backoff{Min: time.Second, Max: 10 * time.Second, Jitter: 0.5, Rand: rand.New(rand.NewPCG(1, 2))}
	for _, c := range []struct {
		n    int
		full time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {500, 10 * time.Second}} {
		for range 50 {
			d := b.Delay(c.n)
			if d < c.full/2 || d > c.full {
				t.Fatalf("Delay(%d) = %s, want in [%s, %s]", c.n, d, c.full/2, c.full)
			}
		}
	}
	exact := clock.Backoff{Min: 3 * time.Second, Max: time.Minute, Factor: 3}
	if d := exact.Delay(3); d != 27*time.Second {
		t.Fatalf("no jitter, factor 3: Delay(3) = %s, want 27s", d)
	}
	if d := (clock.Backoff{Min: time.Second, Max: time.Hour}).Delay(1 << 20); d != time.Hour {
		t.Fatalf("a huge attempt count: %s, want the cap", d)
	}
}

func TestBackoffIsDeterministicUnderASeededSource(t *testing.T) {
	delays := func() []time.Duration {
		b := clock.Backoff{Min: 100 * time.Millisecond, Max: time.Minute, Jitter: 1, Rand: rand.New(rand.NewPCG(7, 7))}
		var out []time.Duration
		for n := 1; n <= 12; n++ {
			out = append(out, b.Delay(n))
		}
		return out
	}
	a, b := delays(), delays()
	varied := false
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("delay %d: %s then %s under the same seed", i+1, a[i], b[i])
		}
		full := min(100*time.Millisecond<<i, time.Minute)
		varied = varied || a[i] != full
	}
	if !varied {
		t.Fatalf("full jitter never moved a delay: %v", a)
	}
}

func TestFakeFiresDueTimersInOrderAndNotStoppedOnes(t *testing.T) {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(start)
	late := f.After(2 * time.Second)
	early := f.NewTimer(time.Second)
	stopped := f.NewTimer(time.Second)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop of a pending timer must report true once")
	}
	if f.Waiters() != 2 {
		t.Fatalf("%d waiters, want 2", f.Waiters())
	}
	f.Advance(999 * time.Millisecond)
	select {
	case <-early.C:
		t.Fatal("fired before its deadline")
	default:
	}
	f.Advance(time.Millisecond)
	if got := <-early.C; !got.Equal(start.Add(time.Second)) {
		t.Fatalf("fired with %s", got)
	}
	select {
	case <-late:
		t.Fatal("the 2 s timer fired at 1 s")
	case <-stopped.C:
		t.Fatal("a stopped timer fired")
	default:
	}
	f.Set(start.Add(time.Hour))
	<-late
	if f.Waiters() != 0 || !f.Now().Equal(start.Add(time.Hour)) {
		t.Fatalf("after Set: %d waiters, now %s", f.Waiters(), f.Now())
	}
	if early.Stop() {
		t.Fatal("Stop of a fired timer reported true")
	}
	select {
	case <-f.After(0):
	default:
		t.Fatal("After(0) did not fire at once")
	}
}

func TestFakeBlockUntilSeesALoopReachItsWait(t *testing.T) {
	f := clock.NewFake(time.Unix(0, 0))
	ticks := make(chan int)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-f.After(time.Minute):
				ticks <- i
			}
		}
	}()
	for want := range 3 {
		if err := f.BlockUntil(ctx, 1); err != nil {
			t.Fatal(err)
		}
		f.Advance(time.Minute)
		if got := <-ticks; got != want {
			t.Fatalf("tick %d, want %d", got, want)
		}
	}
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	if err := f.BlockUntil(short, 2); err == nil {
		t.Fatal("BlockUntil(2) returned with one waiter")
	}
}
