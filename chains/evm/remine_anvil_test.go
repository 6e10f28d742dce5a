package evm_test

import (
	"bytes"
	"context"
	"io"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/ethdev"
)

// Issue 32 item 1: the same USDT transaction, reorged out and mined again
// in another block behind another transaction's log (its block log index
// moves from 0 to 1), is the same transfer: its key is the log's position
// among the transaction's receipt logs, with block receipts and without.
func TestTokenTransferKeySurvivesARemineAtAnotherLogPosition(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	payee, other := newAddress(t), newAddress(t)
	if err := n.Mint(ctx, n.usdc, ethdev.AnvilSecondAccount, big.NewInt(1e9)); err != nil {
		t.Fatal(err)
	}
	pay, err := contracts.TestToken.Call("transfer", payee, big.NewInt(1_234_567))
	if err != nil {
		t.Fatal(err)
	}
	raw, hash, err := n.Sign(ctx, ethdev.TxRequest{To: &n.usdt, Data: pay})
	if err != nil {
		t.Fatal(err)
	}
	h1, err := n.MineTogether(ctx, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	r1 := receipt(t, n, hash)
	withReceipts := n.client(t, evm.TraceOff, nil)
	before := blockOf(t, withReceipts, r1, watch(payee))
	if len(before.Transfers) != 1 || before.Transfers[0].TxID != hash.Hex() {
		t.Fatalf("before the reorg: %+v", before.Transfers)
	}

	if err := n.Reorg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ahead, err := contracts.TestToken.Call("transfer", other, big.NewInt(5))
	if err != nil {
		t.Fatal(err)
	}
	h2, err := n.MineTogether(ctx, []ethdev.TxRequest{{From: ethdev.AnvilSecondAccount, To: &n.usdc, Data: ahead}}, raw)
	if err != nil {
		t.Fatal(err)
	}
	r2 := receipt(t, n, hash)
	if h2 == h1 || r2.BlockHash == r1.BlockHash || r2.Logs[0].Index == r1.Logs[0].Index {
		t.Fatalf("not re-mined at another position: block %d log %d, then block %d log %d", h1, r1.Logs[0].Index, h2, r2.Logs[0].Index)
	}
	for _, c := range []struct {
		name string
		src  *evm.Client
	}{{"block receipts", withReceipts}, {"receipt per transaction", noBlockReceipts(t, n)}} {
		after := blockOf(t, c.src, r2, watch(payee))
		if len(after.Transfers) != 1 {
			t.Fatalf("%s: after the re-mine: %+v", c.name, after.Transfers)
		}
		a, b := after.Transfers[0], before.Transfers[0]
		if a.TxID != b.TxID || a.Index != b.Index || a.Index != 0 || a.Amount.Cmp(b.Amount) != 0 {
			t.Fatalf("%s: re-mined transfer %s:%d (%s), first mined as %s:%d (%s); want the same key, index 0",
				c.name, a.TxID, a.Index, a.Amount, b.TxID, b.Index, b.Amount)
		}
	}
}

// noBlockReceipts is a client of n through a transport that renames
// eth_getBlockReceipts in every request, so that anvil answers it "method
// not found", as a node without it does.
func noBlockReceipts(t *testing.T, n *node) *evm.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := evm.New(ctx, evm.Config{URL: n.RPCURL, Tokens: n.tokens, Trace: evm.TraceOff,
		HTTPClient: &http.Client{Transport: renameMethod{"eth_getBlockReceipts", "eth_getBlockReceiptz"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

type renameMethod struct{ from, to string }

func (m renameMethod) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	body = bytes.ReplaceAll(body, []byte(`"`+m.from+`"`), []byte(`"`+m.to+`"`))
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return http.DefaultTransport.RoundTrip(r)
}
