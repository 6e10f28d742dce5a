package bitcoin

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
)

// countingTransport counts the RPC calls of one method.
type countingTransport struct {
	method string
	n      atomic.Int64
	next   http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(body), `"method":"`+c.method+`"`) {
		c.n.Add(1)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return c.next.RoundTrip(r)
}

func countingClient(t *testing.T, network payment.Network, url, method string) (*Client, *countingTransport) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ct := &countingTransport{method: method, next: tr}
	c, err := New(Config{Network: network, Chain: Regtest, URL: url, HTTPClient: &http.Client{Transport: ct, Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return c, ct
}

// checkPending checks Pending's view of the watched transfers of txid.
func checkPending(t *testing.T, src *Client, w chains.Watched, txid string, want map[string]int64) {
	t.Helper()
	got, err := src.Pending(testCtx(t), w)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Pending = %+v, want %d transfers of %s", got, len(want), txid)
	}
	for _, tr := range got {
		if tr.TxID != txid || want[tr.Address] != tr.Amount.Int64() || tr.Asset != payment.Native {
			t.Fatalf("pending transfer %+v (%s), want txid %s amounts %v", tr, tr.Amount, txid, want)
		}
	}
}

func TestPendingAndMultiOutputBtcd(t *testing.T) {
	c := startBtcdChain(t)
	ctx := testCtx(t)
	src, calls := countingClient(t, payment.Bitcoin, c.node.RPCURL, "getrawtransaction")
	w := chains.NewWatchSet(4)
	want := map[string]int64{}
	var outs []devnet.Output
	for i := 0; i < 4; i++ { // P2WPKH, P2PKH, P2TR, P2SH
		key, addr := c.NewAddress(t)
		w.Add(key)
		want[addr] = int64(10_000 + i)
		outs = append(outs, devnet.Output{Script: key, Amount: int64(10_000 + i)})
	}
	_, unwatchedAddr := c.NewAddress(t)
	outs = append(outs, devnet.Output{Script: c.script(t, unwatchedAddr), Amount: 9_999})
	txid, err := c.node.PayMany(ctx, outs)
	if err != nil {
		t.Fatal(err)
	}
	// Unrelated mempool traffic.
	if _, err := c.node.Pay(ctx, c.node.FaucetScript(), 5_000); err != nil {
		t.Fatal(err)
	}
	checkPending(t, src, w, txid, want)
	first := calls.n.Load()
	if first != 2 {
		t.Fatalf("%d getrawtransaction calls for a mempool of 2", first)
	}
	checkPending(t, src, w, txid, want)
	if calls.n.Load() != first {
		t.Fatalf("second Pending fetched %d transactions again", calls.n.Load()-first)
	}

	c.Mine(t, 1)
	got, err := src.Pending(ctx, w)
	if err != nil || len(got) != 0 {
		t.Fatalf("Pending after mining = %+v, %v; want none", got, err)
	}
	tip, _ := src.Tip(ctx)
	b, err := src.Block(ctx, tip, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 4 {
		t.Fatalf("block transfers %+v, want the 4 watched outputs", b.Transfers)
	}
	for i, tr := range b.Transfers {
		if tr.TxID != txid || tr.Index != int64(i) || want[tr.Address] != tr.Amount.Int64() {
			t.Fatalf("transfer %d = %+v (%s)", i, tr, tr.Amount)
		}
	}
}

func TestPendingAndMultiOutputLitecoind(t *testing.T) {
	c := startLitecoindChain(t, false)
	ctx := testCtx(t)
	src, calls := countingClient(t, payment.Litecoin, c.node.RPCURL, "getrawtransaction")
	w := chains.NewWatchSet(4)
	want := map[string]int64{}
	for i := 0; i < 4; i++ {
		key, addr := c.NewAddress(t)
		w.Add(key)
		want[addr] = int64(100_000 + i)
	}
	txid, err := c.node.SendMany(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	checkPending(t, src, w, txid, want)
	checkPending(t, src, w, txid, want)
	if calls.n.Load() != 1 {
		t.Fatalf("%d getrawtransaction calls for one mempool transaction over two Pending calls", calls.n.Load())
	}
	c.Mine(t, 1)
	if got, err := src.Pending(ctx, w); err != nil || len(got) != 0 {
		t.Fatalf("Pending after mining = %+v, %v; want none", got, err)
	}
	tip, _ := src.Tip(ctx)
	b, err := src.Block(ctx, tip, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 4 {
		t.Fatalf("block transfers %+v, want the 4 watched outputs", b.Transfers)
	}
	for _, tr := range b.Transfers {
		if tr.TxID != txid || want[tr.Address] != tr.Amount.Int64() {
			t.Fatalf("transfer %+v (%s), want txid %s, amounts %v", tr, tr.Amount, txid, want)
		}
	}
}
