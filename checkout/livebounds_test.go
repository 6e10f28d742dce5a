package checkout_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
)

// A live stream keeps nothing of what its client sent: 40 streams opened
// with a 1 MB Last-Event-ID each (net/http's default header bound, which
// the daemon's listeners lower to 16 KB) leave the heap a few MB bigger at
// most, where keeping the header cost 1 MB a stream (issue 34 item 4: 100
// streams grew the daemon by 176 MB).
func TestLiveStreamsKeepNoHeaders(t *testing.T) {
	s := newSite(t, siteOptions{checkout: func(c *config.Checkout) { c.MaxLive, c.MaxLivePerClient, c.MaxLivePerPage = 100, 100, 100 }})
	in := s.create(t, "ORD-HEADERS", "10.00", nil)
	live := s.pageOf(t, in) + "/live"
	big := strings.Repeat("a", 1<<20-200) // one string the client side shares between requests
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	const n = 40
	for range n {
		st := s.openStream(t, live, "Last-Event-ID", big)
		// The state is sent: a header that is not a state's id is no id.
		if m := st.next(t, 10*time.Second); m.ID == "" {
			t.Fatalf("first message has no id: %+v", m)
		}
	}
	waitUntil(t, func() bool { return s.Page.Live() == n })
	grew := int64(heap()) - int64(before)
	if grew > 10<<20 {
		t.Fatalf("%d open streams with a 1 MB Last-Event-ID grew the heap by %d MB, want < 10 MB", n, grew>>20)
	}
	t.Logf("%d streams with a 1 MB header: heap grew %d KB", n, grew>>10)
}

// Live connections are bounded per page (one token, whoever opens it) and,
// for IPv6, per /56 and /48 as well as per /64: one allocation of many
// /64s cannot hold the instance's connections (issue 34 item 4).
func TestLiveConnectionsBoundedPerPageAndPrefix(t *testing.T) {
	s := newSite(t, siteOptions{checkout: func(c *config.Checkout) {
		c.MaxLive, c.MaxLivePerClient, c.MaxLivePerPage = 1000, 2, 3
		c.TrustedProxies = []string{"127.0.0.0/8"}
	}})
	// open opens a live stream as client (through the trusted proxy) and
	// leaves it open; it returns the status.
	open := func(path, client string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), "GET", s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			resp.Body.Close()
		}
		return resp.StatusCode
	}
	one := s.pageOf(t, s.create(t, "ORD-PAGE", "10.00", nil)) + "/live"
	// Per page: 3 streams from 3 clients, the fourth refused.
	for i, c := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3"} {
		if code := open(one, c); code != 200 {
			t.Fatalf("stream %d of the page: %d", i, code)
		}
	}
	if code := open(one, "198.51.100.4"); code != 503 {
		t.Fatalf("a fourth stream of one page: %d, want 503", code)
	}
	// Per /56: 4 × 2 streams from distinct /64s of one /56, then refused;
	// another /56 still served.
	served := 0
	for i := range 12 {
		page := s.pageOf(t, s.create(t, "ORD-V6-"+string(rune('A'+i)), "10.00", nil)) + "/live"
		client := "2001:db8:0:" + string("0123456789abcdef"[i]) + "0::1" // /64s 2001:db8:0:X0::/64 within one /56
		for range 2 {
			if open(page, client) == 200 {
				served++
			}
		}
	}
	if served != 8 {
		t.Fatalf("one /56 was served %d streams, want 8 (4 clients' worth)", served)
	}
	other := s.pageOf(t, s.create(t, "ORD-V6-OTHER", "10.00", nil)) + "/live"
	if code := open(other, "2001:db8:0:100::1"); code != 200 {
		t.Fatalf("another /56: %d", code)
	}
}
