package evm_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/payment"
)

// inMemory serves a fakeNode without a socket.
type inMemory struct{ f *fakeNode }

func (m inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	m.f.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// everyAddress watches every address.
type everyAddress struct{}

func (everyAddress) Contains([]byte) bool { return true }

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// FuzzEthereumBlock runs the production Block (block, receipts, Transfer
// logs and call traces in one batch) over arbitrary node answers, watching
// every address: every transfer it reports pays an address the answers
// name, by an amount they hold (a hex quantity or a 32-byte log word),
// within uint256.
func FuzzEthereumBlock(f *testing.F) {
	payee := addr(9)
	g := garbageBlock(payee)
	node := newFakeNode()
	h := g.install(f, node)
	var logs []json.RawMessage
	for _, l := range node.logs[h] {
		logs = append(logs, l.Raw)
	}
	logsJSON, err := json.Marshal(logs)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(node.blocks[g.Number]), []byte(node.receipts[h]), logsJSON, []byte(node.traces[h]))
	f.Add(fixture(f, "mainnet_eth_getBlockByNumber_0x68b3.json"), fixture(f, "execapis_eth_getBlockReceipts_get_block_receipts_n.response.json"),
		fixture(f, "execapis_eth_getLogs_filter_with_blockHash_and_topics.response.json"), fixture(f, "geth_callTracer_internal_eth_transfer.json"))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := evm.New(ctx, evm.Config{URL: "http://node.invalid", Tokens: mainnetTokens, Trace: evm.TraceOn,
		HTTPClient: &http.Client{Transport: inMemory{node}}})
	if err != nil {
		f.Fatalf("evm.New: %v", err)
	}
	f.Cleanup(c.Close)
	f.Fuzz(func(t *testing.T, block, receipts, logsBody, traces []byte) {
		node.blocks[g.Number] = block
		node.receipts[h] = receipts
		node.traces[h] = traces
		var raws []json.RawMessage
		_ = json.Unmarshal(logsBody, &raws)
		var fl []fakeLog
		for _, r := range raws {
			var l struct {
				Address common.Address `json:"address"`
				Topics  []common.Hash  `json:"topics"`
			}
			if json.Unmarshal(r, &l) != nil || len(l.Topics) == 0 {
				continue
			}
			fl = append(fl, fakeLog{Raw: r, Address: l.Address, Topic0: l.Topics[0]})
		}
		node.logs[h] = fl
		out, err := c.Block(context.Background(), chains.Height(g.Number), everyAddress{})
		if err != nil {
			return
		}
		input := bytes.ToLower(bytes.Join([][]byte{block, receipts, logsBody, traces}, nil))
		for _, tr := range out.Transfers {
			if tr.Amount == nil || tr.Amount.Sign() < 0 || tr.Amount.Cmp(maxUint256) > 0 {
				t.Fatalf("transfer %s: amount %v outside uint256", tr.TxID, tr.Amount)
			}
			if len(tr.Key) != 20 || !bytes.Contains(input, []byte(hex.EncodeToString(tr.Key))) {
				t.Fatalf("transfer %s: address %x is not in the answers", tr.TxID, tr.Key)
			}
			if tr.Asset != payment.Native && tr.Asset != payment.USDT && tr.Asset != payment.USDC {
				t.Fatalf("transfer %s: asset %q", tr.TxID, tr.Asset)
			}
			quantity := []byte("0x" + tr.Amount.Text(16))
			word := []byte(fmt.Sprintf("%064x", tr.Amount))
			if !bytes.Contains(input, quantity) && !bytes.Contains(input, word) {
				t.Fatalf("transfer %s: amount %v is not in the answers", tr.TxID, tr.Amount)
			}
		}
	})
}
