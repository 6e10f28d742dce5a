package config

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// parseProxy parses a trusted proxy: an IP or a CIDR.
func parseProxy(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	ip = ip.Unmap()
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}

func (c *Config) resolveProxies() error {
	c.proxies = nil
	for i, s := range c.TrustedProxies {
		p, err := parseProxy(s)
		if err != nil {
			return invalid(fmt.Sprintf("trusted_proxies[%d]", i), "%q is not an IP address or a CIDR like 10.0.0.0/8", s)
		}
		c.proxies = append(c.proxies, p)
	}
	return nil
}

// DefaultAdminListen is where /metrics and the console are served when
// admin_listen is empty and the API listens beyond loopback.
const DefaultAdminListen = "127.0.0.1:8090"

// AdminOnAPI is the admin_listen value that serves /metrics and the
// console on the API's listener, whatever it listens on.
const AdminOnAPI = "api"

func (c *Config) resolveAdminListen() error {
	switch a := c.AdminListen; {
	case a == AdminOnAPI:
		c.adminListen = ""
	case a == "" && LoopbackAddr(c.Listen):
		c.adminListen = ""
	case a == "":
		c.adminListen = DefaultAdminListen
	default:
		if _, port, err := net.SplitHostPort(a); err != nil {
			return invalid("admin_listen", "must be host:port like 127.0.0.1:8090, %q (on the API's listener), or empty", AdminOnAPI)
		} else if a == c.Listen && port != "0" {
			return invalid("admin_listen", "must differ from listen (say %q to serve /metrics and the console there)", AdminOnAPI)
		}
		c.adminListen = a
	}
	return nil
}

// AdminAddr returns the listener of /metrics and the console as Validate
// resolved admin_listen: "" is the API's own listener (a loopback one, or
// any with admin_listen: api).
func (c *Config) AdminAddr() string { return c.adminListen }

// Proxies returns trusted_proxies as Validate parsed them.
func (c *Config) Proxies() []netip.Prefix { return append([]netip.Prefix{}, c.proxies...) }

// LoopbackHost reports whether host (a name or an IP, no port) is this
// machine: localhost or a loopback address.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// LoopbackAddr reports whether a listen address (host:port) listens on
// this machine only; ":8080" and "0.0.0.0:8080" do not.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && LoopbackHost(host)
}
