package evm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// fakeNode is a JSON-RPC server that replays recorded or generated answers
// in the shape geth gives them. It speaks only the methods the client needs
// and rejects what geth rejects: unknown methods (-32601), eth_getLogs
// filters mixing blockHash with a range, more than 1000 alternatives per
// position or more than 4 topic positions, and malformed params.
type fakeNode struct {
	mu        sync.Mutex
	tip       uint64
	finalized json.RawMessage            // result of eth_getBlockByNumber("finalized")
	blocks    map[uint64]json.RawMessage // full block objects by number
	hashes    map[common.Hash]uint64
	receipts  map[common.Hash]json.RawMessage // eth_getBlockReceipts result by block hash
	logs      map[common.Hash][]fakeLog       // every log of a block, filtered per request
	traces    map[common.Hash]json.RawMessage // debug_traceBlockByHash result
	txReceipt map[common.Hash]json.RawMessage // eth_getTransactionReceipt result
	// noBlockReceipts makes eth_getBlockReceipts "method not found".
	noBlockReceipts bool
	// noTrace makes debug_* "method not found".
	noTrace bool
	// raw, when set, replaces the whole HTTP response body.
	raw []byte
	// override, when it returns ok, answers a call instead of the node.
	override func(method string, params []json.RawMessage) (json.RawMessage, bool)

	calls atomic.Int64 // JSON-RPC calls (batch elements) served
}

// fakeLog is a log as stored by the fake: raw JSON plus what filters match.
type fakeLog struct {
	Raw     json.RawMessage
	Address common.Address
	Topic0  common.Hash
}

func newFakeNode() *fakeNode {
	return &fakeNode{
		blocks:    map[uint64]json.RawMessage{},
		hashes:    map[common.Hash]uint64{},
		receipts:  map[common.Hash]json.RawMessage{},
		logs:      map[common.Hash][]fakeLog{},
		traces:    map[common.Hash]json.RawMessage{},
		txReceipt: map[common.Hash]json.RawMessage{},
	}
}

func (f *fakeNode) start(t testing.TB) string {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

// addBlock stores a full block object (as eth_getBlockByNumber(h, true)
// returns it) and makes it the tip when it is the highest.
func (f *fakeNode) addBlock(t testing.TB, raw json.RawMessage) common.Hash {
	t.Helper()
	var h struct {
		Number hexutil.Uint64 `json:"number"`
		Hash   common.Hash    `json:"hash"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("fake block: %v", err)
	}
	f.blocks[uint64(h.Number)] = raw
	f.hashes[h.Hash] = uint64(h.Number)
	if uint64(h.Number) > f.tip {
		f.tip = uint64(h.Number)
	}
	return h.Hash
}

// addLogs stores the logs of block hash (raw JSON objects).
func (f *fakeNode) addLogs(t testing.TB, hash common.Hash, raws ...json.RawMessage) {
	t.Helper()
	for _, raw := range raws {
		var l struct {
			Address common.Address `json:"address"`
			Topics  []common.Hash  `json:"topics"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("fake log: %v", err)
		}
		fl := fakeLog{Raw: raw, Address: l.Address}
		if len(l.Topics) > 0 {
			fl.Topic0 = l.Topics[0]
		}
		f.logs[hash] = append(f.logs[hash], fl)
	}
}

type rpcReq struct {
	Version string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResp struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcErr         `json:"error,omitempty"`
}

func (f *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	body = bytes.TrimSpace(body)
	var out any
	if len(body) > 0 && body[0] == '[' {
		var reqs []rpcReq
		if err := json.Unmarshal(body, &reqs); err != nil || len(reqs) == 0 {
			out = rpcResp{Version: "2.0", ID: json.RawMessage("null"), Error: &rpcErr{-32600, "invalid request"}}
		} else {
			resps := make([]rpcResp, len(reqs))
			for i, req := range reqs {
				resps[i] = f.handle(req)
			}
			out = resps
		}
	} else {
		var req rpcReq
		if err := json.Unmarshal(body, &req); err != nil {
			out = rpcResp{Version: "2.0", ID: json.RawMessage("null"), Error: &rpcErr{-32700, "parse error"}}
		} else {
			out = f.handle(req)
		}
	}
	if f.raw != nil {
		w.Write(f.raw)
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (f *fakeNode) handle(req rpcReq) rpcResp {
	f.calls.Add(1)
	resp := rpcResp{Version: "2.0", ID: req.ID}
	if req.Version != "2.0" {
		resp.Error = &rpcErr{-32600, "invalid request"}
		return resp
	}
	if f.override != nil {
		if res, ok := f.override(req.Method, req.Params); ok {
			resp.Result = res
			return resp
		}
	}
	res, e := f.call(req.Method, req.Params)
	if e != nil {
		resp.Error = e
	} else {
		resp.Result = res
	}
	return resp
}

func invalidParams(format string, args ...any) *rpcErr {
	return &rpcErr{-32602, "invalid argument: " + fmt.Sprintf(format, args...)}
}

var jsonNull = json.RawMessage("null")

func (f *fakeNode) call(method string, params []json.RawMessage) (json.RawMessage, *rpcErr) {
	notFound := &rpcErr{-32601, fmt.Sprintf("the method %s does not exist/is not available", method)}
	switch method {
	case "eth_blockNumber":
		if len(params) != 0 {
			return nil, invalidParams("too many arguments, want at most 0")
		}
		return json.RawMessage(fmt.Sprintf("%q", hexutil.Uint64(f.tip).String())), nil
	case "eth_getBlockByNumber":
		if len(params) != 2 {
			return nil, invalidParams("want 2 arguments")
		}
		var tag string
		var full bool
		if err := json.Unmarshal(params[0], &tag); err != nil {
			return nil, invalidParams("block number: %v", err)
		}
		if err := json.Unmarshal(params[1], &full); err != nil {
			return nil, invalidParams("fullTx: %v", err)
		}
		switch tag {
		case "finalized":
			if f.finalized == nil {
				return nil, &rpcErr{-32000, "finalized block not found"}
			}
			return f.finalized, nil
		case "latest":
			return f.blocks[f.tip], nil
		}
		n, err := hexutil.DecodeUint64(tag)
		if err != nil {
			return nil, invalidParams("block number %q: %v", tag, err)
		}
		b, ok := f.blocks[n]
		if !ok {
			return jsonNull, nil
		}
		if !full {
			return hashesOnly(b), nil
		}
		return b, nil
	case "eth_getBlockReceipts":
		if f.noBlockReceipts {
			return nil, notFound
		}
		h, e := hashParam(params, 1)
		if e != nil {
			return nil, e
		}
		if r, ok := f.receipts[h]; ok {
			return r, nil
		}
		return jsonNull, nil
	case "eth_getTransactionReceipt":
		h, e := hashParam(params, 1)
		if e != nil {
			return nil, e
		}
		if r, ok := f.txReceipt[h]; ok {
			return r, nil
		}
		return jsonNull, nil
	case "eth_getLogs":
		return f.getLogs(params)
	case "debug_traceBlockByHash":
		if f.noTrace {
			return nil, notFound
		}
		h, e := hashParam(params, 2)
		if e != nil {
			return nil, e
		}
		var cfg map[string]any
		if err := json.Unmarshal(params[1], &cfg); err != nil || cfg["tracer"] != "callTracer" {
			return nil, invalidParams("tracer config %s", params[1])
		}
		if r, ok := f.traces[h]; ok {
			return r, nil
		}
		return nil, &rpcErr{-32000, fmt.Sprintf("block %s not found", h)}
	}
	return nil, notFound
}

func hashParam(params []json.RawMessage, n int) (common.Hash, *rpcErr) {
	if len(params) != n {
		return common.Hash{}, invalidParams("want %d arguments, got %d", n, len(params))
	}
	var s string
	if err := json.Unmarshal(params[0], &s); err != nil {
		return common.Hash{}, invalidParams("%v", err)
	}
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != 32 {
		return common.Hash{}, invalidParams("block hash %q", s)
	}
	return common.BytesToHash(b), nil
}

// getLogs applies a filter the way geth does, for the blockHash form only
// (the client never sends a range).
func (f *fakeNode) getLogs(params []json.RawMessage) (json.RawMessage, *rpcErr) {
	if len(params) != 1 {
		return nil, invalidParams("want 1 argument")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(params[0], &raw); err != nil {
		return nil, invalidParams("%v", err)
	}
	for k := range raw {
		switch k {
		case "blockHash", "address", "topics":
		case "fromBlock", "toBlock":
			return nil, invalidParams("cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other")
		default:
			return nil, invalidParams("unknown filter field %q", k)
		}
	}
	var q struct {
		BlockHash *common.Hash     `json:"blockHash"`
		Address   []common.Address `json:"address"`
		Topics    [][]common.Hash  `json:"topics"`
	}
	if err := json.Unmarshal(params[0], &q); err != nil {
		return nil, invalidParams("%v", err)
	}
	if q.BlockHash == nil {
		return nil, invalidParams("the fake expects a blockHash filter")
	}
	if len(q.Address) > 1000 {
		return nil, &rpcErr{-32602, "exceed max addresses or topics per search position"}
	}
	if len(q.Topics) > 4 {
		return nil, &rpcErr{-32602, "exceed max topics"}
	}
	for _, pos := range q.Topics {
		if len(pos) > 1000 {
			return nil, &rpcErr{-32602, "exceed max addresses or topics per search position"}
		}
	}
	if _, ok := f.hashes[*q.BlockHash]; !ok {
		return nil, &rpcErr{-32000, "unknown block"}
	}
	var out []json.RawMessage
	for _, l := range f.logs[*q.BlockHash] {
		if len(q.Address) > 0 && !containsAddr(q.Address, l.Address) {
			continue
		}
		if len(q.Topics) > 0 && len(q.Topics[0]) > 0 && !containsHash(q.Topics[0], l.Topic0) {
			continue
		}
		out = append(out, l.Raw)
	}
	if out == nil {
		return json.RawMessage("[]"), nil
	}
	b, _ := json.Marshal(out)
	return b, nil
}

func containsAddr(list []common.Address, a common.Address) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

func containsHash(list []common.Hash, h common.Hash) bool {
	for _, x := range list {
		if x == h {
			return true
		}
	}
	return false
}

// fixture reads testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureResult returns the "result" member of a recorded JSON-RPC response.
func fixtureResult(t testing.TB, name string) json.RawMessage {
	t.Helper()
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(fixture(t, name), &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r.Result
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countingTransport counts JSON-RPC calls (batch elements) sent through it.
type countingTransport struct {
	base  http.RoundTripper
	calls atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		trimmed := strings.TrimSpace(string(body))
		if strings.HasPrefix(trimmed, "[") {
			var batch []json.RawMessage
			if err := json.Unmarshal(body, &batch); err == nil {
				c.calls.Add(int64(len(batch)))
			}
		} else {
			c.calls.Add(1)
		}
	}
	return c.base.RoundTrip(r)
}

// hashesOnly is a full block as geth sends it for fullTx false: the
// transactions reduced to their hashes.
func hashesOnly(full json.RawMessage) json.RawMessage {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(full, &b); err != nil {
		return full // garbage stays garbage
	}
	var txs []struct {
		Hash json.RawMessage `json:"hash"`
	}
	_ = json.Unmarshal(b["transactions"], &txs)
	hashes := make([]json.RawMessage, 0, len(txs))
	for _, tx := range txs {
		hashes = append(hashes, tx.Hash)
	}
	b["transactions"], _ = json.Marshal(hashes)
	out, _ := json.Marshal(b)
	return out
}
