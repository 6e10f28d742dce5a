// Package clientaddr tells which client an HTTP request counts against for
// limits and throttles: the connection's peer, or, when the peer is one of
// the configured trusted proxies, the rightmost X-Forwarded-For address that
// is not a proxy (each proxy appends the address it got the request from;
// what the client wrote itself stands further left and is not believed).
//
// A client is counted by a prefix, not an address: an IPv4 address is its
// own /32, an IPv6 address its /64 (one subscriber's network, which one host
// can fill with addresses at will). Wider IPv6 prefixes (Within) let a
// limit also bound what one provider's customer (a /56 or a /48) can hold.
package clientaddr
