package store

import (
	"strings"
	"syscall"
	"time"
)

// userTimeout sets TCP_USER_TIMEOUT on TCP connections: data the server
// does not acknowledge within d (a partition, a host that lost power) ends
// the connection instead of being retransmitted for many minutes.
func userTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(network, _ string, c syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			const tcpUserTimeout = 0x12 // TCP_USER_TIMEOUT, linux/tcp.h
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
