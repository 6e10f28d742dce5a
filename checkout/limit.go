package checkout

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
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

// clientOf returns the client a request counts against: its address, or
// for a request from a trusted proxy the last X-Forwarded-For entry that is
// not one; an IPv6 client is its /64 (one subscriber's network).
func clientOf(r *http.Request, proxies []netip.Prefix) netip.Prefix {
	addr := peerAddr(r.RemoteAddr)
	if trusted(addr, proxies) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			addr = a.Unmap()
			if !trusted(addr, proxies) {
				break
			}
		}
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p
	}
	return netip.PrefixFrom(addr, addr.BitLen())
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.IPv4Unspecified()
	}
	return a.Unmap()
}

func trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// liveCounts bounds the open live connections, in all and per client.
type liveCounts struct {
	mu        sync.Mutex
	max, per  int
	total     int
	perClient map[netip.Prefix]int
}

// open counts one more connection of client; false beyond a bound.
func (c *liveCounts) open(client netip.Prefix) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total >= c.max || c.perClient[client] >= c.per {
		return false
	}
	c.total++
	c.perClient[client]++
	return true
}

func (c *liveCounts) close(client netip.Prefix) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.perClient[client]--; c.perClient[client] <= 0 {
		delete(c.perClient, client)
	}
}

// Open returns the number of open connections.
func (c *liveCounts) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
