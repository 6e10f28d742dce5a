//go:build !linux

package store

import (
	"syscall"
	"time"
)

// userTimeout is a no-op where TCP_USER_TIMEOUT does not exist; the
// keepalives and the probe still notice a lost server.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
