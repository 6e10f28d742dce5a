package chains_test

import (
	"errors"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/paywatch/paywatch/chains"
)

func TestRedactTextLeavesOnlyTheHost(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://alice:s3cret@127.0.0.1:8545/v3/KEY123?api-key=QK1",
		Err: errors.New("dial tcp 127.0.0.1:8545: connect: connection refused")}
	for _, c := range []struct{ in, want string }{
		{"node tip: " + refused.Error(), "node tip: node 127.0.0.1:8545: connection refused"},
		{`evm: dial wss://mainnet.infura.io/ws/v3/KEY123: bad handshake`, "evm: dial node mainnet.infura.io: bad handshake"},
		{`getSlot: Post "https://rpc.example.com/?api-key=QK1": EOF`, "getSlot: node rpc.example.com: EOF"},
		{"block 7: not found", "block 7: not found"},
	} {
		got := chains.RedactText(c.in)
		if got != c.want {
			t.Errorf("RedactText(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, secret := range []string{"KEY123", "QK1", "alice", "s3cret", "/v3/", "?"} {
			if strings.Contains(got, secret) {
				t.Errorf("RedactText(%q) = %q still holds %q", c.in, got, secret)
			}
		}
	}
	err := chains.RedactError(errors.Join(chains.ErrNodeBehind, &url.Error{Op: "Get", URL: refused.URL, Err: syscall.ECONNREFUSED}))
	if !errors.Is(err, chains.ErrNodeBehind) || !errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("RedactError lost the cause or kept the secret: %v", err)
	}
}
