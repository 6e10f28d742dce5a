package evm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/payment"
)

// garbageBlock is block 77: an ETH payment, a USDT transfer, and an internal
// transfer, all to payee.
func garbageBlock(payee common.Address) genBlock {
	return genBlock{Number: 77, Parent: common.Hash{7}, Txs: []genTx{
		{To: &payee, Value: big.NewInt(1000)},
		{To: &mainnetUSDT},
		{To: &mainnetUSDC, Internal: []genCall{{To: payee, Value: big.NewInt(5)}}},
	}, Logs: []genLog{transferLog(1, mainnetUSDT, addr(1), payee, big.NewInt(2000))}}
}

// edit decodes a JSON value, lets fn change it, and encodes it again.
func edit(t *testing.T, raw json.RawMessage, fn func(v any) any) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, fn(v))
}

func TestGarbageResponses(t *testing.T) {
	payee := addr(42)
	good := func(t *testing.T) (*fakeNode, common.Hash) {
		f := newFakeNode()
		g := garbageBlock(payee)
		return f, g.install(t, f)
	}
	obj := func(v any) map[string]any { return v.(map[string]any) }
	arr := func(v any) []any { return v.([]any) }
	cases := []struct {
		name    string
		mutate  func(t *testing.T, f *fakeNode, hash common.Hash)
		invalid bool // want ErrInvalidResponse; else any error naming the height
	}{
		{"BodyNotJSON", func(t *testing.T, f *fakeNode, _ common.Hash) { f.raw = []byte("<html>502 Bad Gateway</html>") }, true},
		{"BodyTruncated", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.raw = []byte(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x4d"`)
		}, true},
		{"WrongNumber", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.blocks[77] = edit(t, f.blocks[77], func(v any) any { obj(v)["number"] = "0x4e"; return v })
		}, true},
		{"MissingHash", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.blocks[77] = edit(t, f.blocks[77], func(v any) any { delete(obj(v), "hash"); return v })
		}, true},
		{"TransactionsAsHashes", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.blocks[77] = edit(t, f.blocks[77], func(v any) any {
				b := obj(v)
				for i, tx := range arr(b["transactions"]) {
					arr(b["transactions"])[i] = obj(tx)["hash"]
				}
				return v
			})
		}, true},
		{"BadValueHex", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.blocks[77] = edit(t, f.blocks[77], func(v any) any {
				obj(arr(obj(v)["transactions"])[0])["value"] = "0xzz"
				return v
			})
		}, true},
		{"ShortAddress", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.blocks[77] = edit(t, f.blocks[77], func(v any) any {
				obj(arr(obj(v)["transactions"])[0])["to"] = "0x1234"
				return v
			})
		}, true},
		{"ReceiptMissing", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.receipts[h] = edit(t, f.receipts[h], func(v any) any { return arr(v)[:2] })
		}, true},
		{"ReceiptsOfOtherBlock", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.receipts[h] = edit(t, f.receipts[h], func(v any) any {
				obj(arr(v)[0])["blockHash"] = common.Hash{9}.Hex()
				return v
			})
		}, true},
		{"ReceiptsNull", func(t *testing.T, f *fakeNode, h common.Hash) { delete(f.receipts, h) }, true},
		{"ReceiptStatusTwo", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.receipts[h] = edit(t, f.receipts[h], func(v any) any { obj(arr(v)[0])["status"] = "0x2"; return v })
		}, true},
		{"LogDataShort", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.logs[h][0].Raw = edit(t, f.logs[h][0].Raw, func(v any) any { obj(v)["data"] = "0x" + strings.Repeat("00", 31); return v })
		}, true},
		{"LogOfOtherBlock", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.logs[h][0].Raw = edit(t, f.logs[h][0].Raw, func(v any) any { obj(v)["blockHash"] = common.Hash{9}.Hex(); return v })
		}, true},
		{"LogTxNotInBlock", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.logs[h][0].Raw = edit(t, f.logs[h][0].Raw, func(v any) any { obj(v)["transactionHash"] = common.Hash{9}.Hex(); return v })
		}, true},
		{"LogWithoutIndex", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.logs[h][0].Raw = edit(t, f.logs[h][0].Raw, func(v any) any { delete(obj(v), "logIndex"); return v })
		}, true},
		{"MissingTransactions", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.blocks[77] = edit(t, f.blocks[77], func(v any) any { delete(obj(v), "transactions"); return v })
		}, true},
		{"LogNotTransfer", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.override = func(method string, _ []json.RawMessage) (json.RawMessage, bool) {
				if method != "eth_getLogs" {
					return nil, false
				}
				return edit(t, mustJSON(t, []json.RawMessage{f.logs[h][0].Raw}), func(v any) any {
					obj(arr(v)[0])["topics"] = []string{common.Hash{0xab}.Hex()}
					return v
				}), true
			}
		}, true},
		{"LogRemoved", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.logs[h][0].Raw = edit(t, f.logs[h][0].Raw, func(v any) any { obj(v)["removed"] = true; return v })
		}, true},
		{"LogIndexTwice", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.logs[h] = append(f.logs[h], f.logs[h][0])
		}, true},
		{"TraceMissing", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.traces[h] = edit(t, f.traces[h], func(v any) any { return arr(v)[1:] })
		}, true},
		{"TraceOfOtherTx", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.traces[h] = edit(t, f.traces[h], func(v any) any { obj(arr(v)[0])["txHash"] = common.Hash{9}.Hex(); return v })
		}, true},
		{"TraceFailedForTx", func(t *testing.T, f *fakeNode, h common.Hash) {
			f.traces[h] = edit(t, f.traces[h], func(v any) any {
				a := arr(v)
				a[2] = map[string]any{"txHash": obj(a[2])["txHash"], "error": "execution timeout"}
				return v
			})
		}, false},
		{"BatchAnswerMissing", func(t *testing.T, f *fakeNode, _ common.Hash) {
			f.override = func(method string, _ []json.RawMessage) (json.RawMessage, bool) {
				if method == "eth_getLogs" {
					f.raw = []byte(`[{"jsonrpc":"2.0","id":99,"result":[]}]`)
				}
				return nil, false
			}
		}, true},
		{"NodeErrorOnLogs", func(t *testing.T, f *fakeNode, h common.Hash) {
			delete(f.hashes, h) // eth_getLogs then answers -32000 "unknown block"
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, hash := good(t)
			url := f.start(t)
			c := newClient(t, url, evm.TraceOn, mainnetTokens, nil)
			// The unmodified block decodes: the failure below is the mutation's.
			b, err := c.Block(context.Background(), 77, watch(payee))
			if err != nil || len(b.Transfers) != 3 {
				t.Fatalf("good block: %+v, %v", b.Transfers, err)
			}
			f.mu.Lock()
			tc.mutate(t, f, hash)
			f.mu.Unlock()
			_, err = c.Block(context.Background(), 77, watch(payee))
			if err == nil {
				t.Fatal("no error")
			}
			if tc.invalid != errors.Is(err, chains.ErrInvalidResponse) {
				t.Fatalf("err = %v; ErrInvalidResponse wanted: %v", err, tc.invalid)
			}
			if !strings.Contains(err.Error(), "77") {
				t.Fatalf("err %q does not name height 77", err)
			}
			t.Logf("%v", err)
		})
	}
}

func TestBlockContents(t *testing.T) {
	payee, other := addr(42), addr(43)
	lookAlike := addr(99)
	g := genBlock{Number: 12, Parent: common.Hash{3}, Txs: []genTx{
		{To: &payee, Value: big.NewInt(0)},                // zero ETH: no transfer
		{To: &payee, Value: big.NewInt(10)},               // ETH
		{To: &other, Value: big.NewInt(11)},               // unwatched
		{To: &payee, Value: big.NewInt(12), Failed: true}, // reverted
		{To: nil, Value: big.NewInt(13)},                  // contract creation
		{To: &mainnetUSDT},                                // token transfers below
		{To: &lookAlike},                                  // look-alike
		{To: &addr1, Internal: []genCall{ // internal transfers
			{To: payee, Value: big.NewInt(20)},                                  // n=0 → -2
			{To: addr(5), Calls: []genCall{{To: payee, Value: big.NewInt(21)}}}, // n=1, child n=2 → -4
			{To: payee, Value: big.NewInt(22), Error: "execution reverted"},     // n=3 → skipped
			{To: payee, Value: big.NewInt(23), Type: "DELEGATECALL"},            // n=4 → not CALL
			{To: payee, Value: big.NewInt(0)},                                   // n=5 → zero
			{To: other, Value: big.NewInt(24)},                                  // n=6 → unwatched
		}},
	}, Logs: []genLog{
		transferLog(5, mainnetUSDT, addr(1), payee, big.NewInt(30)),
		transferLog(5, mainnetUSDC, addr(1), payee, big.NewInt(31)),
		transferLog(5, mainnetUSDT, addr(1), payee, big.NewInt(0)),
		transferLog(5, mainnetUSDT, addr(1), other, big.NewInt(32)),
		{Tx: 5, Address: mainnetUSDT, Topics: []common.Hash{evm.TransferTopic, {}, common.BytesToHash(payee.Bytes()), {1}}}, // ERC-721 shape
		{Tx: 5, Address: mainnetUSDT, Topics: []common.Hash{{0xab}, common.BytesToHash(payee.Bytes())}, Data: make([]byte, 32)},
		transferLog(6, lookAlike, addr(1), payee, big.NewInt(33)),
		transferLog(3, mainnetUSDT, addr(1), payee, big.NewInt(34)), // in the reverted tx: never served
	}}
	f := newFakeNode()
	g.install(t, f)
	url := f.start(t)
	want := []string{
		fmt.Sprintf("%s/-1/native/10", g.txHash(1).Hex()),
		fmt.Sprintf("%s/0/USDT/30", g.txHash(5).Hex()),
		fmt.Sprintf("%s/1/USDC/31", g.txHash(5).Hex()),
		fmt.Sprintf("%s/2/USDT/0", g.txHash(5).Hex()),
		fmt.Sprintf("%s/-2/native/20", g.txHash(7).Hex()),
		fmt.Sprintf("%s/-4/native/21", g.txHash(7).Hex()),
	}
	for _, mode := range []string{"blockReceipts", "txReceipts"} {
		t.Run(mode, func(t *testing.T) {
			f.noBlockReceipts = mode == "txReceipts"
			c := newClient(t, url, evm.TraceOn, mainnetTokens, nil)
			b, err := c.Block(context.Background(), 12, watch(payee))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tr := range b.Transfers {
				if string(tr.Key) != string(payee.Bytes()) || tr.Address != payee.Hex() {
					t.Fatalf("transfer to %s", tr.Address)
				}
				got = append(got, fmt.Sprintf("%s/%d/%s/%s", tr.TxID, tr.Index, tr.Asset, tr.Amount))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("transfers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	_ = payment.Native
}

var addr1 = addr(1)
