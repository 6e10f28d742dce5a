package console

import (
	"net/netip"
	"testing"
	"time"

	"github.com/paywatch/paywatch/clientaddr"
)

// A flood of new client addresses does not wipe out a lock-out: the
// remembered clients are capped, and the oldest clients within their limit
// are forgotten first; a lock lasts its window, then is forgotten.
func TestThrottleEvictsInsteadOfResetting(t *testing.T) {
	l := newFailLimiter(5)
	start := time.Unix(1_800_000_000, 0)
	a := clientaddr.Bucket(netip.MustParseAddr("203.0.113.5"))
	for range 6 {
		l.fail(a, start)
	}
	flood := func(i int) netip.Prefix {
		return clientaddr.Bucket(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	for i := range maxThrottled + 500 {
		l.fail(flood(i), start.Add(time.Second))
	}
	if n := l.len(); n != maxThrottled {
		t.Fatalf("%d clients remembered, want the cap %d", n, maxThrottled)
	}
	if n := l.fail(a, start.Add(2*time.Second)); n != 7 {
		t.Fatalf("the locked-out client after a flood: failure %d, want 7 (its count kept)", n)
	}
	// The flood's oldest were forgotten, its newest are remembered.
	if n := l.fail(flood(0), start.Add(3*time.Second)); n != 1 {
		t.Fatalf("the flood's oldest client: failure %d, want 1 (forgotten)", n)
	}
	if n := l.fail(flood(maxThrottled+499), start.Add(3*time.Second)); n != 2 {
		t.Fatalf("the flood's newest client: failure %d, want 2", n)
	}
	if n := l.fail(a, start.Add(time.Minute+time.Second)); n != 1 {
		t.Fatalf("the locked-out client after its window: failure %d, want 1", n)
	}
}

// IPv4 clients are counted per address, IPv6 clients per /64, and an
// IPv4-mapped IPv6 address as the IPv4 address it is.
func TestClientBucket(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.5":             "203.0.113.5/32",
		"::ffff:203.0.113.5":      "203.0.113.5/32",
		"2001:db8:1:2:3:4:5:6":    "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1234": "2001:db8:1:2::/64",
	} {
		if got := clientaddr.Bucket(netip.MustParseAddr(in)).String(); got != want {
			t.Errorf("clientaddr.Bucket(%s) = %s, want %s", in, got, want)
		}
	}
}
