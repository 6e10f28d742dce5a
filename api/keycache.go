package api

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/paywatch/paywatch/store"
)

// keyTTL bounds how long a revoked key keeps working on an instance, and
// how long an unknown key is remembered as unknown.
const keyTTL = 5 * time.Second

// Unknown keys are throttled per client (clientaddr.Bucket): beyond
// unknownKeysPerWindow answers of "unknown key" in unknownKeyWindow, a
// client's requests with a key this instance has not seen valid lately are
// answered 429 without a query, until the window ends. A key cached as
// valid still works from that client.
const (
	unknownKeysPerWindow = 30
	unknownKeyWindow     = time.Minute
	// maxKeyEntries bounds each of the cache's maps; beyond it a map
	// starts over (a flood of random keys costs memory once, not forever).
	maxKeyEntries = 10000
)

// errKeyThrottled is lookup's answer to a client over the unknown-key
// limit; the request is refused with 429 and nothing is read.
var errKeyThrottled = errors.New("api: too many unknown API keys from this client")

// keyCache remembers recent API key lookups by the key's hash (never the
// plaintext), so a busy storefront does not cost a query per request, and
// recent failures, so unknown keys do not either: a repeated unknown key
// is answered from memory for keyTTL, and a client that sends many is
// throttled.
type keyCache struct {
	mu      sync.Mutex
	entries map[[32]byte]cachedKey
	misses  map[[32]byte]time.Time
	fails   map[netip.Prefix]failWindow
}

type cachedKey struct {
	key store.APIKey
	at  time.Time
}

// failWindow counts a client's unknown keys since start.
type failWindow struct {
	start time.Time
	n     int
}

// lookup returns the key for plain, from memory when it was looked up
// within keyTTL. client is who sent it: an unknown key counts against it,
// and beyond the limit lookup answers errKeyThrottled with the wait.
func (c *keyCache) lookup(ctx context.Context, st Reader, plain string, now time.Time, client netip.Prefix) (store.APIKey, time.Duration, error) {
	h := sha256.Sum256([]byte(plain))
	c.mu.Lock()
	if e, ok := c.entries[h]; ok && fresh(e.at, now) {
		c.mu.Unlock()
		return e.key, 0, nil
	}
	if w, ok := c.fails[client]; ok && now.Sub(w.start) >= 0 && now.Sub(w.start) < unknownKeyWindow && w.n >= unknownKeysPerWindow {
		c.mu.Unlock()
		return store.APIKey{}, w.start.Add(unknownKeyWindow).Sub(now), errKeyThrottled
	}
	if at, ok := c.misses[h]; ok && fresh(at, now) {
		c.failLocked(client, now)
		c.mu.Unlock()
		return store.APIKey{}, 0, store.ErrNotFound
	}
	c.mu.Unlock()
	k, err := st.APIKeyByPlain(ctx, plain)
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, store.ErrNotFound) {
		if c.misses == nil || len(c.misses) >= maxKeyEntries {
			c.misses = map[[32]byte]time.Time{}
		}
		c.misses[h] = now
		c.failLocked(client, now)
		return k, 0, err
	}
	if err != nil {
		return k, 0, err
	}
	if c.entries == nil || len(c.entries) >= maxKeyEntries {
		c.entries = map[[32]byte]cachedKey{}
	}
	c.entries[h] = cachedKey{key: k, at: now}
	return k, 0, nil
}

// failLocked counts an unknown key of client at now (c.mu held).
func (c *keyCache) failLocked(client netip.Prefix, now time.Time) {
	if c.fails == nil || len(c.fails) >= maxKeyEntries {
		c.fails = map[netip.Prefix]failWindow{}
	}
	w := c.fails[client]
	if d := now.Sub(w.start); d < 0 || d >= unknownKeyWindow {
		w = failWindow{start: now}
	}
	w.n++
	c.fails[client] = w
}

// fresh reports whether an entry made at at is still good at now (a clock
// that went back makes it stale).
func fresh(at, now time.Time) bool {
	d := now.Sub(at)
	return d >= 0 && d < keyTTL
}

// forget drops the cached keys of shop named name (a key just rotated:
// this instance refuses the old one at once; others within keyTTL).
func (c *keyCache) forget(shop, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.entries {
		if e.key.Store == shop && e.key.Name == name {
			delete(c.entries, h)
		}
	}
}
