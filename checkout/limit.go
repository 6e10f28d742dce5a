package checkout

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/paywatch/paywatch/clientaddr"
)

// rateLimiter is a token bucket per client: rate tokens a second up to
// burst. It keeps at most maxClients buckets: beyond, the full ones (clients
// quiet for a while) are dropped.
type rateLimiter struct {
	mu    sync.Mutex
	rate  float64
	burst float64
	by    map[netip.Prefix]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

const maxClients = 100000

func newRateLimiter(perMinute int) *rateLimiter {
	return &rateLimiter{rate: float64(perMinute) / 60, burst: max(10, float64(perMinute)/3), by: map[netip.Prefix]*bucket{}}
}

// allow takes a token of client's bucket; false when it is empty.
func (l *rateLimiter) allow(client netip.Prefix, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.by[client]
	if b == nil {
		if len(l.by) >= maxClients {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.by[client] = b
	}
	if el := now.Sub(b.at).Seconds(); el > 0 {
		b.tokens = min(l.burst, b.tokens+el*l.rate)
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// prune drops the buckets that would be full by now; when none is, all of
// them (the map stays bounded under a flood of addresses).
func (l *rateLimiter) prune(now time.Time) {
	for k, b := range l.by {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.by, k)
		}
	}
	if len(l.by) >= maxClients {
		clear(l.by)
	}
}

// clientOf returns the client a request counts against (clientaddr.Of,
// through the trusted proxies): an IPv4 address, or an IPv6 /64.
func clientOf(r *http.Request, proxies []netip.Prefix) netip.Prefix {
	return clientaddr.Bucket(clientaddr.Of(r, proxies))
}

// liveCounts bounds the open live connections: in all, per client (an
// IPv4 address or an IPv6 /64), per wider IPv6 prefix (a /56 at most
// wideFactor56 clients' worth, a /48 wideFactor48: one subscriber's or one
// site's network, which holds 256 or 65,536 /64s), and per page (one
// token), so neither a few hundred addresses nor one IPv6 allocation nor
// one link can hold the instance's connections.
type liveCounts struct {
	mu                sync.Mutex
	max, per, perPage int
	total             int
	by                map[liveKey]int
}

// Wider IPv6 prefixes hold at most this many clients' connections.
const (
	wideFactor56 = 4
	wideFactor48 = 16
)

// liveKey is one thing connections are counted by: a client prefix, a
// wider prefix, or a page's token.
type liveKey struct {
	prefix netip.Prefix
	token  string
}

// bounds lists what a connection of client to token counts against, with
// each one's limit.
func (c *liveCounts) bounds(client netip.Prefix, token string) []liveBound {
	b := []liveBound{{liveKey{prefix: client}, c.per}, {liveKey{token: token}, c.perPage}}
	if a := client.Addr(); a.Is6() {
		b = append(b, liveBound{liveKey{prefix: clientaddr.Within(a, 56)}, wideFactor56 * c.per},
			liveBound{liveKey{prefix: clientaddr.Within(a, 48)}, wideFactor48 * c.per})
	}
	return b
}

type liveBound struct {
	key   liveKey
	limit int
}

// open counts one more connection of client to token; false beyond a bound.
func (c *liveCounts) open(client netip.Prefix, token string) bool {
	b := c.bounds(client, token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total >= c.max {
		return false
	}
	for _, x := range b {
		if c.by[x.key] >= x.limit {
			return false
		}
	}
	c.total++
	for _, x := range b {
		c.by[x.key]++
	}
	return true
}

func (c *liveCounts) close(client netip.Prefix, token string) {
	b := c.bounds(client, token)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	for _, x := range b {
		if c.by[x.key]--; c.by[x.key] <= 0 {
			delete(c.by, x.key)
		}
	}
}

// Open returns the number of open connections.
func (c *liveCounts) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
