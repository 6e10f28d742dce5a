package api

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/paywatch/paywatch/store"
)

// keyTTL bounds how long a revoked key keeps working on an instance.
const keyTTL = 5 * time.Second

// keyCache remembers recent API key lookups by the key's hash (never the
// plaintext), so a busy storefront does not cost a query per request.
// Unknown keys are not cached.
type keyCache struct {
	mu      sync.Mutex
	entries map[[32]byte]cachedKey
}

type cachedKey struct {
	key store.APIKey
	at  time.Time
}

func (c *keyCache) lookup(ctx context.Context, st Reader, plain string, now time.Time) (store.APIKey, error) {
	h := sha256.Sum256([]byte(plain))
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if ok && now.Sub(e.at) >= 0 && now.Sub(e.at) < keyTTL {
		return e.key, nil
	}
	k, err := st.APIKeyByPlain(ctx, plain)
	if err != nil {
		return k, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) > 10000 {
		c.entries = map[[32]byte]cachedKey{}
	}
	c.entries[h] = cachedKey{key: k, at: now}
	c.mu.Unlock()
	return k, nil
}
