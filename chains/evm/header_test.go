package evm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/payment"
)

// TestHeaderIsOneCallWithoutTransactions: a walk-back step (Header) is one
// eth_getBlockByNumber without transactions, where Block of the same block
// in trace mode also reads receipts, logs and traces; both agree on the
// block's identity. Run in both trace modes.
func TestHeaderIsOneCallWithoutTransactions(t *testing.T) {
	for _, trace := range []string{evm.TraceOn, evm.TraceOff} {
		f := newFakeNode()
		g := garbageBlock(addr(42))
		g.install(t, f)
		rt := &countingTransport{base: http.DefaultTransport}
		c := newClient(t, f.start(t), trace, []evm.Token{{Asset: payment.USDT, Contract: mainnetUSDT}}, rt)
		ctx := context.Background()
		before := rt.calls.Load()
		ref, err := c.Header(ctx, 77)
		if err != nil {
			t.Fatalf("trace=%s: Header: %v", trace, err)
		}
		headerCalls := rt.calls.Load() - before
		before = rt.calls.Load()
		b, err := c.Block(ctx, 77, chains.NewWatchSet(1))
		if err != nil {
			t.Fatalf("trace=%s: Block: %v", trace, err)
		}
		blockCalls := rt.calls.Load() - before
		t.Logf("trace=%s: JSON-RPC calls per walk-back step: %d (Header), %d (Block)", trace, headerCalls, blockCalls)
		if headerCalls != 1 || ref != b.BlockRef {
			t.Fatalf("trace=%s: Header = %+v in %d calls; Block says %+v", trace, ref, headerCalls, b.BlockRef)
		}
		if blockCalls <= headerCalls {
			t.Fatalf("trace=%s: Block took %d calls, Header %d: the block has transactions to read", trace, blockCalls, headerCalls)
		}
		if _, err := c.Header(ctx, 78); !errors.Is(err, chains.ErrBlockNotFound) {
			t.Fatalf("trace=%s: Header above the tip = %v, want ErrBlockNotFound", trace, err)
		}
	}
}
