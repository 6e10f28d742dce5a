package console

import (
	"container/list"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/clientaddr"
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

// clientAddr is the address of the client, through the trusted proxies
// (clientaddr.Of).
func (c *Console) clientAddr(r *http.Request) netip.Addr {
	return clientaddr.Of(r, c.proxies)
}

// secureRequest reports whether the request reached the daemon over TLS, or
// a trusted proxy says it reached the proxy over https.
func (c *Console) secureRequest(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !clientaddr.Trusted(clientaddr.Peer(r), c.proxies) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
