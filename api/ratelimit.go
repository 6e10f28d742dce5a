package api

import (
	"sync"
	"time"
)

// keyBuckets is a token bucket per API key (limits.creates_per_minute,
// limits.create_burst): each creation takes a token, tokens come back at
// the configured rate up to the burst. It counts in the server's clock.
type keyBuckets struct {
	perMinute, burst int
	mu               sync.Mutex
	buckets          map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// take takes a token of key at now; when there is none it returns false
// and how long until there is one.
func (k *keyBuckets) take(key string, now time.Time) (bool, time.Duration) {
	if k == nil || k.perMinute <= 0 {
		return true, 0
	}
	rate := float64(k.perMinute) / float64(time.Minute) // tokens per nanosecond
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.buckets == nil {
		k.buckets = map[string]*bucket{}
	}
	b := k.buckets[key]
	if b == nil {
		b = &bucket{tokens: float64(k.burst), at: now}
		k.buckets[key] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(k.burst), b.tokens+float64(d)*rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / rate)
}
