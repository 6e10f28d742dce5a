package nodes_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// A btcd network that lists endpoints is polled: Notify says at once that
// there are no notifications (logged once, at info), rather than dialling
// the pool's placeholder host (a DNS lookup of endpoints.invalid) and
// warning "notifications lost" forever, as the sandbox's terminal showed
// (issue 33 item 8).
func TestPooledBtcdIsPolledNotDialled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node, err := devnet.StartBtcd(ctx, t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop()
	src, _, err := nodes.New(ctx, poolConfig(t, payment.Bitcoin, "regtest", fmt.Sprintf(`    endpoints:
      - {name: node, url: %q}`, node.RPCURL)), payment.Bitcoin, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := src.(chains.Notifier)
	if !ok {
		t.Fatalf("%T is not a chains.Notifier", src)
	}
	err = n.Notify(ctx, func() {})
	if !errors.Is(err, chains.ErrNotifyUnsupported) {
		t.Fatalf("Notify through a pool: %v, want chains.ErrNotifyUnsupported", err)
	}
}
