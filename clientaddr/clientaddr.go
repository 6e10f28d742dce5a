package clientaddr

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Peer returns the address of the request's connection peer (the zero
// Addr when RemoteAddr is not an address).
func Peer(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// Trusted reports whether a is within one of proxies.
func Trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Of returns the client's address: the peer, or, when the peer is a
// trusted proxy, the rightmost X-Forwarded-For entry that is not a trusted
// proxy. A garbled hop counts the proxy itself (the peer).
func Of(r *http.Request, proxies []netip.Prefix) netip.Addr {
	peer := Peer(r)
	if !Trusted(peer, proxies) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		if a = a.Unmap(); !Trusted(a, proxies) {
			return a
		}
	}
	return peer
}

// Bucket is what a limit counts a client by: its IPv4 address, or the /64
// of its IPv6 address.
func Bucket(a netip.Addr) netip.Prefix {
	return Within(a, 64)
}

// Within returns the prefix of a of bits length for IPv6 (an IPv4 address
// is always its own /32, the zero Addr an invalid Prefix that still
// compares equal to itself).
func Within(a netip.Addr, bits int) netip.Prefix {
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(bits)
	return p
}
