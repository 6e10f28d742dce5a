package console

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// throttleWindow is how long failed sign-ins of a client are counted.
const throttleWindow = time.Minute

// maxThrottled is how many clients the sign-in throttle remembers. Beyond
// it the oldest are forgotten first, the clients that are locked out last:
// a flood of new addresses cannot wipe out a lock.
const maxThrottled = 10000

// failLimiter counts failed sign-ins per client (an IPv4 address, an IPv6
// /64) in windows of throttleWindow; a failure beyond max in a window is
// over the limit. It only counts; the caller decides what being over the
// limit refuses (never a valid key).
type failLimiter struct {
	mu  sync.Mutex
	max int
	cap int
	by  map[netip.Prefix]*list.Element
	// counting and locked hold the windows within and beyond the limit,
	// each in the order the windows started, oldest first.
	counting, locked list.List
}

// failWindow is one client's count.
type failWindow struct {
	key   netip.Prefix
	start time.Time
	n     int
	in    *list.List // counting or locked
}

func newFailLimiter(max int) *failLimiter {
	return &failLimiter{max: max, cap: maxThrottled, by: map[netip.Prefix]*list.Element{}}
}

// fail counts a failed sign-in of client at now and returns the client's
// failures in its window, this one included: above max is over the limit.
func (l *failLimiter) fail(client netip.Prefix, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	var w *failWindow
	if e, ok := l.by[client]; ok {
		w = e.Value.(*failWindow)
		if now.Before(w.start) { // the clock went back: start over
			w.in.Remove(e)
			delete(l.by, client)
			w = nil
		}
	}
	if w == nil {
		for len(l.by) >= l.cap {
			l.evictOne()
		}
		w = &failWindow{key: client, start: now, in: &l.counting}
		l.by[client] = l.counting.PushBack(w)
	}
	w.n++
	if w.n > l.max && w.in == &l.counting {
		// Moved to the locked list, in the order windows started.
		l.counting.Remove(l.by[client])
		w.in = &l.locked
		at := l.locked.Back()
		for at != nil && at.Value.(*failWindow).start.After(w.start) {
			at = at.Prev()
		}
		if at == nil {
			l.by[client] = l.locked.PushFront(w)
		} else {
			l.by[client] = l.locked.InsertAfter(w, at)
		}
	}
	return w.n
}

// expire forgets the windows that ended by now.
func (l *failLimiter) expire(now time.Time) {
	for _, ls := range []*list.List{&l.counting, &l.locked} {
		for e := ls.Front(); e != nil; e = ls.Front() {
			w := e.Value.(*failWindow)
			if now.Sub(w.start) < throttleWindow {
				break
			}
			ls.Remove(e)
			delete(l.by, w.key)
		}
	}
}

// evictOne forgets the oldest client under its limit, or, when every one
// is locked out, the oldest lock.
func (l *failLimiter) evictOne() {
	ls := &l.counting
	if ls.Len() == 0 {
		ls = &l.locked
	}
	if e := ls.Front(); e != nil {
		ls.Remove(e)
		delete(l.by, e.Value.(*failWindow).key)
	}
}

// len returns how many clients are remembered.
func (l *failLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.by)
}

// clientBucket is what the throttle counts a client by: its IPv4 address,
// or the /64 of its IPv6 address (one host's share of a network).
func clientBucket(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// peerAddr is the address of the connection's peer.
func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// trusted reports whether a is one of the configured proxies.
func (c *Console) trusted(a netip.Addr) bool {
	for _, p := range c.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the address of the client: the peer, or, when the peer is
// a trusted proxy, the rightmost address of X-Forwarded-For that is not a
// trusted proxy (each proxy appends the address it got the request from;
// what a client writes itself is further left and not believed).
func (c *Console) clientAddr(r *http.Request) netip.Addr {
	peer := peerAddr(r)
	if !c.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a garbled hop: count the proxy itself
		}
		if a = a.Unmap(); !c.trusted(a) {
			return a
		}
	}
	return peer
}

// secureRequest reports whether the request reached the daemon over TLS, or
// a trusted proxy says it reached the proxy over https.
func (c *Console) secureRequest(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !c.trusted(peerAddr(r)) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
