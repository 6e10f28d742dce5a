package evm_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/payment"
)

var (
	mainnetUSDT   = common.HexToAddress(payment.MustMethod(payment.USDTERC20).MainnetContract)
	mainnetUSDC   = common.HexToAddress(payment.MustMethod(payment.USDCERC20).MainnetContract)
	mainnetTokens = []evm.Token{{Asset: payment.USDT, Contract: mainnetUSDT}, {Asset: payment.USDC, Contract: mainnetUSDC}}
)

func watch(addrs ...common.Address) *chains.WatchSet {
	w := chains.NewWatchSet(len(addrs))
	for _, a := range addrs {
		w.Add(a.Bytes())
	}
	return w
}

func newClient(t testing.TB, url string, trace string, tokens []evm.Token, hc *countingTransport) *evm.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := evm.Config{URL: url, Tokens: tokens, Trace: trace}
	if hc != nil {
		cfg.HTTPClient = &http.Client{Transport: hc}
	}
	c, err := evm.New(ctx, cfg)
	if err != nil {
		t.Fatalf("evm.New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// rpcReceiptFixture is the part of the mainnet receipt fixture the test reads.
type rpcReceiptFixture struct {
	BlockHash       common.Hash       `json:"blockHash"`
	BlockNumber     hexutil.Uint64    `json:"blockNumber"`
	TransactionHash common.Hash       `json:"transactionHash"`
	To              common.Address    `json:"to"`
	Logs            []json.RawMessage `json:"logs"`
}

// TestGoldenMainnetUSDT replays the real receipt of mainnet transaction
// 0xcd718a69… (block 17,291,184): 4,361.142255 USDT to 0x901c7c31….
// The block object around it is generated (the fixture has only the
// receipt); receipt and logs are the recorded ones.
func TestGoldenMainnetUSDT(t *testing.T) {
	raw := fixtureResult(t, "mainnet_eth_getTransactionReceipt_usdt_in_0xcd718a69.json")
	var rc rpcReceiptFixture
	if err := json.Unmarshal(raw, &rc); err != nil {
		t.Fatal(err)
	}
	if rc.BlockNumber != 17291184 {
		t.Fatalf("fixture block %d", rc.BlockNumber)
	}
	f := newFakeNode()
	block := map[string]any{
		"number": rc.BlockNumber, "hash": rc.BlockHash, "parentHash": crypto.Keccak256Hash([]byte("parent")),
		"timestamp": "0x64660a2b",
		"transactions": []map[string]any{{"hash": rc.TransactionHash, "to": rc.To, "value": "0x0",
			"from": "0x901c7c311d39e0b26257219765e71e8db3107a81", "blockHash": rc.BlockHash, "blockNumber": rc.BlockNumber}},
	}
	f.addBlock(t, mustJSON(t, block))
	f.receipts[rc.BlockHash] = mustJSON(t, []json.RawMessage{raw})
	f.addLogs(t, rc.BlockHash, rc.Logs...)
	url := f.start(t)

	payee := common.HexToAddress("0x901c7c311d39e0b26257219765e71e8db3107a81")
	// 0xa82f… receives a Transfer of the unconfigured contract 0xb713… in
	// the same transaction: it must not count.
	other := common.HexToAddress("0xa82f91562e1cef9dec93a4ad328d01ea7827910a")
	c := newClient(t, url, evm.TraceOff, mainnetTokens, nil)
	b, err := c.Block(context.Background(), 17291184, watch(payee, other))
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != rc.BlockHash.Hex() || b.Height != 17291184 {
		t.Fatalf("block ref %+v", b.BlockRef)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers %+v, want exactly the USDT one", b.Transfers)
	}
	// Index 0: the USDT log is the first of the transaction's four logs
	// (its block log index is 0x24e).
	tr := b.Transfers[0]
	if tr.TxID != "0xcd718a69d478340dc28fdf6bf8056374a52dc95841b44083163ced8dfe29310c" || tr.Index != 0 ||
		tr.Asset != payment.USDT || tr.Amount.String() != "4361142255" || string(tr.Key) != string(payee.Bytes()) ||
		tr.Address != payee.Hex() || tr.Address == strings.ToLower(tr.Address) {
		t.Fatalf("transfer %+v amount %s", tr, tr.Amount)
	}
	if got := payment.FormatUnits(tr.Amount, 6); got != "4361.142255" {
		t.Fatalf("amount %s USDT", got)
	}

	t.Run("NodeIgnoringAddressFilter", func(t *testing.T) {
		// A node that ignores the address filter returns the 0xb713…
		// Transfer too: the client refuses the answer instead of trusting it.
		f.override = func(method string, params []json.RawMessage) (json.RawMessage, bool) {
			if method != "eth_getLogs" {
				return nil, false
			}
			return mustJSON(t, rc.Logs), true
		}
		defer func() { f.override = nil }()
		_, err := c.Block(context.Background(), 17291184, watch(payee, other))
		if !errors.Is(err, chains.ErrInvalidResponse) {
			t.Fatalf("err = %v, want ErrInvalidResponse", err)
		}
	})
}

// TestGoldenHiveBlock replays execution-apis' finalized block 0x36 (4
// transactions, the last one sending 2 wei to 0x7dcd…) with generated
// receipts, and the eth_blockNumber/finalized/notfound fixtures.
func TestGoldenHiveBlock(t *testing.T) {
	raw := fixtureResult(t, "execapis_eth_getBlockByNumber_get_finalized.response.json")
	var blk struct {
		Hash         common.Hash    `json:"hash"`
		ParentHash   common.Hash    `json:"parentHash"`
		Number       hexutil.Uint64 `json:"number"`
		Timestamp    hexutil.Uint64 `json:"timestamp"`
		Transactions []struct {
			Hash common.Hash     `json:"hash"`
			To   *common.Address `json:"to"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(raw, &blk); err != nil {
		t.Fatal(err)
	}
	receipts := func(failLast bool) json.RawMessage {
		var rs []map[string]any
		for i, tx := range blk.Transactions {
			status := "0x1"
			if failLast && i == len(blk.Transactions)-1 {
				status = "0x0"
			}
			rs = append(rs, map[string]any{"transactionHash": tx.Hash, "blockHash": blk.Hash, "status": status, "logs": []any{}})
		}
		return mustJSON(t, rs)
	}
	f := newFakeNode()
	f.addBlock(t, raw)
	f.finalized = raw
	f.receipts[blk.Hash] = receipts(false)
	url := f.start(t)
	ctx := context.Background()
	c := newClient(t, url, evm.TraceOff, mainnetTokens, nil)

	f.override = func(method string, _ []json.RawMessage) (json.RawMessage, bool) {
		if method == "eth_blockNumber" {
			return fixtureResult(t, "execapis_eth_blockNumber_simple_test.response.json"), true
		}
		return nil, false
	}
	tip, err := c.Tip(ctx)
	if err != nil || tip != 0x36 {
		t.Fatalf("Tip = %d, %v; want 54", tip, err)
	}
	fin, err := c.FinalizedHeight(ctx)
	if err != nil || fin != 0x36 {
		t.Fatalf("FinalizedHeight = %d, %v; want 54", fin, err)
	}
	// A node without the tag (geth answers -32000 "finalized block not
	// found" before the merge) has finalized height 0.
	f.finalized = nil
	if fin, err := c.FinalizedHeight(ctx); err != nil || fin != 0 {
		t.Fatalf("FinalizedHeight without the tag = %d, %v; want 0", fin, err)
	}
	f.override = func(method string, params []json.RawMessage) (json.RawMessage, bool) {
		if method == "eth_getBlockByNumber" && string(params[0]) == `"0x37"` {
			return fixtureResult(t, "execapis_eth_getBlockByNumber_get_block_notfound.response.json"), true
		}
		return nil, false
	}
	if _, err := c.Block(ctx, 0x37, watch()); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Block(0x37) = %v, want ErrBlockNotFound", err)
	}

	payee := common.HexToAddress("0x7dcd17433742f4c0ca53122ab541d0ba67fc27df")
	b, err := c.Block(ctx, 0x36, watch(payee))
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != blk.Hash.Hex() || b.Parent != blk.ParentHash.Hex() || !b.Time.Equal(time.Unix(int64(blk.Timestamp), 0)) {
		t.Fatalf("block ref %+v time %v", b.BlockRef, b.Time)
	}
	last := blk.Transactions[len(blk.Transactions)-1]
	if len(b.Transfers) != 1 || b.Transfers[0].TxID != last.Hash.Hex() || b.Transfers[0].Amount.Int64() != 2 ||
		b.Transfers[0].Index != chains.NativeIndex || b.Transfers[0].Asset != payment.Native {
		t.Fatalf("transfers %+v", b.Transfers)
	}
	// The same block with the paying transaction reverted reports nothing.
	f.receipts[blk.Hash] = receipts(true)
	b, err = c.Block(ctx, 0x36, watch(payee))
	if err != nil || len(b.Transfers) != 0 {
		t.Fatalf("reverted payment: transfers %+v, err %v", b.Transfers, err)
	}
}

// TestGoldenEmptyPreLondonBlock decodes mainnet block 26803 (2015, no
// baseFee, totalDifficulty present, no transactions) with one call.
func TestGoldenEmptyPreLondonBlock(t *testing.T) {
	raw := fixtureResult(t, "mainnet_eth_getBlockByNumber_0x68b3.json")
	f := newFakeNode()
	f.addBlock(t, raw)
	url := f.start(t)
	c := newClient(t, url, evm.TraceOff, mainnetTokens, nil)
	before := f.calls.Load()
	b, err := c.Block(context.Background(), 0x68b3, watch(addr(1)))
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != "0xf7756d836b6716aaeffc2139c032752ba5acf02fe94acb65743f0d177554b2e2" ||
		b.Parent != "0xbc33aa8829350cc2e3ba7cf64d4beb2f1b554d570efc8bccb7b05ef50d76a47a" ||
		b.Time.Unix() != 0x55bf47e3 || len(b.Transfers) != 0 {
		t.Fatalf("block %+v", b)
	}
	if n := f.calls.Load() - before; n != 1 {
		t.Fatalf("%d calls for an empty block, want 1", n)
	}
}

// TestGoldenPreByzantiumReceipts replays execution-apis' receipts of block
// 1 of the hive chain, which carry "root" instead of "status".
func TestGoldenPreByzantiumReceipts(t *testing.T) {
	raw := fixtureResult(t, "execapis_eth_getBlockReceipts_get_block_receipts_n.response.json")
	var rs []map[string]any
	if err := json.Unmarshal(raw, &rs); err != nil {
		t.Fatal(err)
	}
	hash := common.HexToHash(rs[0]["blockHash"].(string))
	var txs []map[string]any
	for _, r := range rs {
		txs = append(txs, map[string]any{"hash": r["transactionHash"], "to": r["to"], "value": "0x0"})
	}
	f := newFakeNode()
	f.addBlock(t, mustJSON(t, map[string]any{"number": "0x1", "hash": hash, "parentHash": common.Hash{1},
		"timestamp": "0xa", "transactions": txs}))
	f.receipts[hash] = raw
	url := f.start(t)
	c := newClient(t, url, evm.TraceOff, mainnetTokens, nil)
	if _, err := c.Block(context.Background(), 1, watch(addr(1))); err != nil {
		t.Fatalf("root receipts: %v", err)
	}
	delete(rs[2], "root")
	f.receipts[hash] = mustJSON(t, rs)
	_, err := c.Block(context.Background(), 1, watch(addr(1)))
	if !errors.Is(err, chains.ErrInvalidResponse) {
		t.Fatalf("receipt without status or root: err = %v, want ErrInvalidResponse", err)
	}
}

// TestGoldenCallTracer replays geth's callTracer test "simple": a contract
// call (value 0) whose nested CALL sends 0.5 ETH to 0x0024f658….
func TestGoldenCallTracer(t *testing.T) {
	var fx struct {
		Context struct {
			Number    string `json:"number"`
			Timestamp string `json:"timestamp"`
		} `json:"context"`
		Input  hexutil.Bytes   `json:"input"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(fixture(t, "geth_callTracer_internal_eth_transfer.json"), &fx); err != nil {
		t.Fatal(err)
	}
	txHash := crypto.Keccak256Hash(fx.Input) // the hash of a legacy transaction is keccak of its RLP
	n, _ := new(big.Int).SetString(fx.Context.Number, 10)
	height := n.Uint64()
	hash := crypto.Keccak256Hash([]byte("block"), n.Bytes())
	to := common.HexToAddress("0x3b873a919aa0512d5a0f09e6dcceaa4a6727fafe")
	f := newFakeNode()
	f.addBlock(t, mustJSON(t, map[string]any{"number": hexutil.Uint64(height), "hash": hash, "parentHash": common.Hash{2},
		"timestamp": "0x5a37c322", "transactions": []map[string]any{{"hash": txHash, "to": to, "value": "0x0"}}}))
	f.receipts[hash] = mustJSON(t, []map[string]any{{"transactionHash": txHash, "blockHash": hash, "status": "0x1"}})
	f.traces[hash] = mustJSON(t, []map[string]any{{"txHash": txHash, "result": fx.Result}})
	url := f.start(t)
	c := newClient(t, url, evm.TraceAuto, mainnetTokens, nil)
	if c.TraceMode() != evm.ModeTrace {
		t.Fatalf("TraceMode = %s", c.TraceMode())
	}
	payee := common.HexToAddress("0x0024f658a46fbb89d8ac105e98d7ac7cbbaf27c5")
	b, err := c.Block(context.Background(), chains.Height(height), watch(payee, to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers %+v", b.Transfers)
	}
	tr := b.Transfers[0]
	if tr.TxID != txHash.Hex() || tr.Index != -2 || tr.Asset != payment.Native || tr.Amount.String() != "500000000000000000" ||
		tr.Address != payee.Hex() {
		t.Fatalf("internal transfer %+v amount %s", tr, tr.Amount)
	}

	// Without tracing the same block shows nothing: the payment is internal.
	f.noTrace = true
	c2 := newClient(t, url, evm.TraceAuto, mainnetTokens, nil)
	if c2.TraceMode() != evm.ModeBalanceCheck {
		t.Fatalf("TraceMode without debug_* = %s", c2.TraceMode())
	}
	if b, err := c2.Block(context.Background(), chains.Height(height), watch(payee)); err != nil || len(b.Transfers) != 0 {
		t.Fatalf("untraced: %+v, %v", b.Transfers, err)
	}
	if _, err := evm.New(context.Background(), evm.Config{URL: url, Trace: evm.TraceOn}); err == nil {
		t.Fatal("Trace on against a node without debug_traceBlockByHash: no error")
	}
}

// TestLogFilterShape checks the eth_getLogs request against the
// execution-apis blockHash filter fixture: same form (blockHash, nested
// topics), plus the configured contracts, and never a watched address.
func TestLogFilterShape(t *testing.T) {
	var fx struct {
		Params []map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(fixture(t, "execapis_eth_getLogs_filter_with_blockHash_and_topics.request.json"), &fx); err != nil {
		t.Fatal(err)
	}
	payee := addr(7)
	g := genBlock{Number: 5, Txs: []genTx{{To: &mainnetUSDT}}, Logs: []genLog{transferLog(0, mainnetUSDT, addr(8), payee, big.NewInt(9))}}
	f := newFakeNode()
	g.install(t, f)
	var seen map[string]json.RawMessage
	f.override = func(method string, params []json.RawMessage) (json.RawMessage, bool) {
		if method == "eth_getLogs" {
			json.Unmarshal(params[0], &seen)
		}
		return nil, false
	}
	url := f.start(t)
	c := newClient(t, url, evm.TraceOff, mainnetTokens, nil)
	b, err := c.Block(context.Background(), 5, watch(payee))
	if err != nil || len(b.Transfers) != 1 {
		t.Fatalf("Block: %+v, %v", b, err)
	}
	for k := range fx.Params[0] {
		if _, ok := seen[k]; !ok {
			t.Errorf("our filter lacks %q (have %s)", k, mustJSON(t, seen))
		}
	}
	var topics [][]common.Hash
	var addrs []common.Address
	if err := json.Unmarshal(seen["topics"], &topics); err != nil || len(topics) != 1 || len(topics[0]) != 1 || topics[0][0] != evm.TransferTopic {
		t.Errorf("topics %s", seen["topics"])
	}
	if err := json.Unmarshal(seen["address"], &addrs); err != nil || len(addrs) != 2 || addrs[0] != mainnetUSDT || addrs[1] != mainnetUSDC {
		t.Errorf("address %s", seen["address"])
	}
	if len(seen) != 3 {
		t.Errorf("filter %s has extra fields", mustJSON(t, seen))
	}
}
