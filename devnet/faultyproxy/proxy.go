// Package faultyproxy is a faulty node provider to test the endpoint pool
// against (issue 33 item 7): an HTTP reverse proxy before a real node
// (btcd, litecoind, anvil) or a simulated one (Tron, Solana) that
// misbehaves on command as rented providers do: it lags N blocks (hiding
// the newest, answering null, "out of range" or {} for them), answers 429
// with Retry-After, 503s, drops connections, slows answers, moves its
// head backwards, and lies about a transaction (Lie).
package faultyproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind is the API the node speaks, which lagging must understand.
type Kind string

// The kinds of node.
const (
	// Bitcoin is Bitcoin Core, Litecoin Core and btcd JSON-RPC.
	Bitcoin Kind = "bitcoin"
	// EVM is Ethereum JSON-RPC.
	EVM Kind = "evm"
	// Tron is java-tron's HTTP API.
	Tron Kind = "tron"
	// Solana is agave's JSON-RPC (the head is the finalized slot).
	Solana Kind = "solana"
)

// Fault is what the proxy does wrong; the zero Fault forwards honestly.
type Fault struct {
	// Lag hides the newest Lag blocks: the head is the node's minus Lag,
	// and a block above it is answered as a node that has not seen it.
	Lag int64
	// Backwards, when set, answers this head once, then Lag again.
	Backwards int64
	// Throttle answers 429 with Retry-After (seconds) to every request.
	Throttle   bool
	RetryAfter int
	// Unavailable answers 503 to every request.
	Unavailable bool
	// Drop closes every connection without an answer.
	Drop bool
	// Slow delays every answer.
	Slow time.Duration
	// Lie rewrites the answers it forwards: a provider that lies about a
	// transaction (its amount, its destination) to the second source
	// verifying it (issue 33 item 5).
	Lie *Lie
}

// Lie replaces every occurrence of Find in an answer's body with Replace:
// an amount's JSON ("amount":20000000) or its bytes in a raw block's hex.
type Lie struct {
	Find, Replace string
}

// Proxy is one faulty endpoint before a node.
type Proxy struct {
	kind    Kind
	backend string
	srv     *httptest.Server
	hc      *http.Client

	mu    sync.Mutex
	fault Fault
	calls int
}

// New starts a proxy on a loopback port before the node at backend (its
// base URL, credentials included: they are forwarded).
func New(kind Kind, backend string) *Proxy {
	p := &Proxy{kind: kind, backend: strings.TrimRight(backend, "/"), hc: &http.Client{Timeout: time.Minute}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.CloseClientConnections(); p.srv.Close() }

// Set replaces the proxy's fault.
func (p *Proxy) Set(f Fault) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

// Calls is how many requests the proxy got.
func (p *Proxy) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.calls++
	f := p.fault
	if f.Backwards > 0 {
		p.fault.Backwards = 0
	}
	p.mu.Unlock()
	if f.Slow > 0 {
		select {
		case <-time.After(f.Slow):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case f.Drop:
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case f.Throttle:
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		http.Error(w, `{"error":"too many requests"}`, http.StatusTooManyRequests)
		return
	case f.Unavailable:
		http.Error(w, "backend unavailable", http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if f.Lag == 0 && f.Backwards == 0 {
		p.forward(w, r, body, f.Lie)
		return
	}
	var err error
	switch p.kind {
	case Tron:
		err = p.lagTron(w, r, body, f)
	default:
		err = p.lagJSONRPC(w, r, body, f)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// forward sends the request as it came and copies the answer (as lie
// rewrites it, when set).
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte, lie *Lie) {
	status, hdr, out, err := p.roundTrip(r, r.URL.Path, body)
	if err != nil {
		http.Error(w, "backend: "+err.Error(), http.StatusBadGateway)
		return
	}
	if lie != nil && lie.Find != "" {
		out = bytes.ReplaceAll(out, []byte(lie.Find), []byte(lie.Replace))
	}
	for k, vs := range hdr {
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
	w.Write(out)
}

func (p *Proxy) roundTrip(r *http.Request, path string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.backend+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = r.Header.Clone()
	// The proxy reads the answers it rewrites: let the transport ask for
	// gzip and undo it.
	req.Header.Del("Accept-Encoding")
	if u, pw, ok := backendAuth(p.backend); ok {
		req.SetBasicAuth(u, pw)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	h.Del("Content-Length")
	return resp.StatusCode, h, out, err
}

// backendAuth is the user info of the backend URL (net/http sends it as
// basic auth, but a request's own Authorization would win).
func backendAuth(raw string) (string, string, bool) {
	rest, ok := strings.CutPrefix(raw, "http://")
	if !ok {
		return "", "", false
	}
	at := strings.Index(rest, "@")
	if at < 0 {
		return "", "", false
	}
	u, pw, _ := strings.Cut(rest[:at], ":")
	return u, pw, true
}

// call sends one JSON-RPC call to the backend.
func (p *Proxy) call(r *http.Request, method string, params ...any) (json.RawMessage, error) {
	if params == nil {
		params = []any{} // anvil refuses null params
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	_, _, out, err := p.roundTrip(r, r.URL.Path, b)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, err
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		return nil, fmt.Errorf("%s: %s", method, resp.Error)
	}
	return resp.Result, nil
}

type rpcReq struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

// head is the node's head as the proxy shows it.
func (p *Proxy) head(r *http.Request, f Fault) (int64, error) {
	var real int64
	switch p.kind {
	case Bitcoin:
		res, err := p.call(r, "getblockcount")
		if err != nil {
			return 0, err
		}
		if err := json.Unmarshal(res, &real); err != nil {
			return 0, err
		}
	case EVM:
		res, err := p.call(r, "eth_blockNumber")
		if err != nil {
			return 0, err
		}
		var hex string
		if err := json.Unmarshal(res, &hex); err != nil {
			return 0, err
		}
		real, err = strconv.ParseInt(strings.TrimPrefix(hex, "0x"), 16, 64)
		if err != nil {
			return 0, err
		}
	case Solana:
		res, err := p.call(r, "getSlot", map[string]string{"commitment": "finalized"})
		if err != nil {
			return 0, err
		}
		if err := json.Unmarshal(res, &real); err != nil {
			return 0, err
		}
	}
	if f.Backwards > 0 {
		return f.Backwards, nil
	}
	return max(0, real-f.Lag), nil
}

// lagJSONRPC answers one JSON-RPC request (or a batch) as a node f.Lag
// blocks behind.
func (p *Proxy) lagJSONRPC(w http.ResponseWriter, r *http.Request, body []byte, f Fault) error {
	head, err := p.head(r, f)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var reqs []json.RawMessage
		if err := json.Unmarshal(trimmed, &reqs); err != nil {
			return err
		}
		outs := make([]json.RawMessage, 0, len(reqs))
		for _, one := range reqs {
			out, _, err := p.lagOne(r, one, head)
			if err != nil {
				return err
			}
			outs = append(outs, out)
		}
		b, _ := json.Marshal(outs)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return nil
	}
	out, status, err := p.lagOne(r, trimmed, head)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
	return nil
}

func (p *Proxy) lagOne(r *http.Request, body []byte, head int64) (json.RawMessage, int, error) {
	var req rpcReq
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, 0, err
	}
	answer := func(result any) (json.RawMessage, int, error) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": req.JSONRPC, "id": req.ID, "result": result})
		return b, http.StatusOK, nil
	}
	notFound := func(code int, msg string, status int) (json.RawMessage, int, error) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": req.JSONRPC, "id": req.ID, "result": nil, "error": map[string]any{"code": code, "message": msg}})
		return b, status, nil
	}
	num := func(i int) (int64, bool) {
		if len(req.Params) <= i {
			return 0, false
		}
		var n int64
		if json.Unmarshal(req.Params[i], &n) == nil {
			return n, true
		}
		var s string
		if json.Unmarshal(req.Params[i], &s) == nil && strings.HasPrefix(s, "0x") {
			v, err := strconv.ParseInt(s[2:], 16, 64)
			return v, err == nil
		}
		return 0, false
	}
	switch req.Method {
	case "getblockcount":
		return answer(head)
	case "getbestblockhash":
		res, err := p.call(r, "getblockhash", head)
		if err != nil {
			return nil, 0, err
		}
		return answer(res)
	case "getblockhash":
		if h, ok := num(0); ok && h > head {
			return notFound(-8, "Block height out of range", http.StatusInternalServerError)
		}
	case "eth_blockNumber":
		return answer(fmt.Sprintf("0x%x", head))
	case "eth_getBlockByNumber":
		if n, ok := num(0); ok && n > head {
			return answer(nil)
		}
		var tag string
		if len(req.Params) > 0 && json.Unmarshal(req.Params[0], &tag) == nil && !strings.HasPrefix(tag, "0x") {
			// latest, safe, finalized: never above the shown head.
			req.Params[0], _ = json.Marshal(fmt.Sprintf("0x%x", head))
			if tag != "latest" && tag != "pending" {
				res, err := p.call(r, "eth_getBlockByNumber", json.RawMessage(`"`+tag+`"`), false)
				if err == nil {
					var b struct {
						Number string `json:"number"`
					}
					if json.Unmarshal(res, &b) == nil {
						if n, err := strconv.ParseInt(strings.TrimPrefix(b.Number, "0x"), 16, 64); err == nil && n < head {
							req.Params[0], _ = json.Marshal(b.Number)
						}
					}
				}
			}
			body, _ = json.Marshal(req)
		}
	case "getSlot":
		return answer(head)
	case "getBlock":
		if n, ok := num(0); ok && n > head {
			return notFound(-32004, fmt.Sprintf("Block not available for slot %d", n), http.StatusOK)
		}
	}
	_, _, out, err := p.roundTrip(r, r.URL.Path, body)
	return out, http.StatusOK, err
}

// lagTron answers a Tron HTTP API request as a node f.Lag blocks behind.
func (p *Proxy) lagTron(w http.ResponseWriter, r *http.Request, body []byte, f Fault) error {
	_, _, now, err := p.roundTrip(r, "/wallet/getnowblock", nil)
	if err != nil {
		return err
	}
	var nb struct {
		BlockHeader struct {
			RawData struct {
				Number int64 `json:"number"`
			} `json:"raw_data"`
		} `json:"block_header"`
	}
	if err := json.Unmarshal(now, &nb); err != nil {
		return err
	}
	head := max(0, nb.BlockHeader.RawData.Number-f.Lag)
	if f.Backwards > 0 {
		head = f.Backwards
	}
	var req struct {
		Num      *int64 `json:"num"`
		StartNum *int64 `json:"startNum"`
		EndNum   *int64 `json:"endNum"`
	}
	_ = json.Unmarshal(body, &req)
	path := r.URL.Path
	switch {
	case path == "/wallet/getnowblock":
		path, body = "/wallet/getblockbynum", []byte(fmt.Sprintf(`{"num":%d}`, head))
	case req.Num != nil && *req.Num > head:
		// An unseen block: {} for a block, [] for its infos.
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(path, "transactioninfo") {
			io.WriteString(w, "[]")
		} else {
			io.WriteString(w, "{}")
		}
		return nil
	case req.StartNum != nil && req.EndNum != nil && *req.EndNum > head+1:
		if *req.StartNum > head {
			io.WriteString(w, "{}")
			return nil
		}
		body = []byte(fmt.Sprintf(`{"startNum":%d,"endNum":%d}`, *req.StartNum, head+1))
	}
	status, hdr, out, err := p.roundTrip(r, path, body)
	if err != nil {
		return err
	}
	for k, vs := range hdr {
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
	w.Write(out)
	return nil
}
