package clock

import (
	"math"
	"math/rand/v2"
	"time"
)

// Rand is the random source a Backoff draws its jitter from
// (*math/rand/v2.Rand satisfies it).
type Rand interface {
	Int64N(n int64) int64
}

// Backoff is a jittered exponential retry delay. The zero Factor is 2; the
// zero Jitter is none.
type Backoff struct {
	// Min is the delay after the first failure.
	Min time.Duration
	// Max caps the delay (at least Min).
	Max time.Duration
	// Factor multiplies the delay after each further failure (values below
	// 1 mean 2).
	Factor float64
	// Jitter is the share of the delay drawn at random, in [0, 1]: the
	// delay d becomes a value in [d·(1−Jitter), d]. 0.5 spreads retries of
	// many callers while keeping at least half the wait.
	Jitter float64
	// Rand draws the jitter; nil is math/rand/v2's global source. A
	// *rand.Rand is not safe for concurrent use: give each goroutine its
	// own.
	Rand Rand
}

// Delay returns the wait after the n-th consecutive failure (n ≥ 1):
// Min·Factor^(n−1) capped at Max, of which the Jitter share is random.
func (b Backoff) Delay(n int) time.Duration {
	factor := b.Factor
	if factor < 1 {
		factor = 2
	}
	maxD := max(b.Max, b.Min)
	d := maxD
	if f := float64(b.Min) * math.Pow(factor, float64(max(n, 1)-1)); f < float64(maxD) {
		d = time.Duration(f)
	}
	j := int64(float64(d) * min(max(b.Jitter, 0), 1))
	if j <= 0 {
		return d
	}
	var r int64
	if b.Rand != nil {
		r = b.Rand.Int64N(j + 1)
	} else {
		r = rand.Int64N(j + 1)
	}
	return d - time.Duration(j) + time.Duration(r)
}
