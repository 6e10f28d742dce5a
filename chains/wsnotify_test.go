package chains_test

import (
	"testing"

	"github.com/paywatch/paywatch/chains"
)

// TestNotifyURL: a configured notify URL is used as it is; otherwise the
// RPC URL's http becomes ws and https wss (ws and wss stay), and any other
// URL gives none (the scanner polls). The feeds themselves are tested per
// chain by chainstest.RunWS.
func TestNotifyURL(t *testing.T) {
	for _, c := range []struct{ configured, rpc, want string }{
		{"ws://127.0.0.1:8900", "http://127.0.0.1:8899", "ws://127.0.0.1:8900"},
		{"", "http://127.0.0.1:8545", "ws://127.0.0.1:8545"},
		{"", "https://u:p@node.example/v3/key?x=1", "wss://u:p@node.example/v3/key?x=1"},
		{"", "wss://node.example/ws", "wss://node.example/ws"},
		{"", "tcp://127.0.0.1:28332", ""},
		{"", "127.0.0.1:8545", ""},
		{"", "://", ""},
		{"", "", ""},
	} {
		if got := chains.NotifyURL(c.configured, c.rpc); got != c.want {
			t.Errorf("NotifyURL(%q, %q) = %q, want %q", c.configured, c.rpc, got, c.want)
		}
	}
}
