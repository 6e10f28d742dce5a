package clientaddr_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/paywatch/paywatch/clientaddr"
)

func TestOfBelievesOnlyTrustedProxies(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, c := range []struct {
		peer, xff, want string
	}{
		{"203.0.113.5:4000", "", "203.0.113.5"},
		{"203.0.113.5:4000", "198.51.100.1", "203.0.113.5"},                    // an untrusted peer's header is ignored
		{"10.1.2.3:4000", "198.51.100.1", "198.51.100.1"},                      // through one proxy
		{"10.1.2.3:4000", "192.0.2.9, 198.51.100.1, 10.9.9.9", "198.51.100.1"}, // the rightmost untrusted hop
		{"10.1.2.3:4000", "garbage", "10.1.2.3"},                               // a garbled hop counts the proxy
		{"10.1.2.3:4000", "10.4.4.4", "10.1.2.3"},                              // only proxies: the peer
		{"[::1]:4000", "2001:db8::7", "2001:db8::7"},
		{"[::ffff:203.0.113.5]:4000", "", "203.0.113.5"}, // mapped addresses are unmapped
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := clientaddr.Of(r, proxies); got != netip.MustParseAddr(c.want) {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}

func TestBucketsAndWiderPrefixes(t *testing.T) {
	for _, c := range []struct {
		addr string
		bits int
		want string
	}{
		{"203.0.113.5", 64, "203.0.113.5/32"},
		{"203.0.113.5", 48, "203.0.113.5/32"},
		{"2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"},
		{"2001:db8:1:2ff:3:4:5:6", 56, "2001:db8:1:200::/56"},
		{"2001:db8:1:2ff:3:4:5:6", 48, "2001:db8:1::/48"},
	} {
		if got := clientaddr.Within(netip.MustParseAddr(c.addr), c.bits); got.String() != c.want {
			t.Errorf("Within(%s, %d) = %s, want %s", c.addr, c.bits, got, c.want)
		}
	}
	if got := clientaddr.Bucket(netip.MustParseAddr("2001:db8::1")); got.String() != "2001:db8::/64" {
		t.Errorf("Bucket of an IPv6 address: %s", got)
	}
}
