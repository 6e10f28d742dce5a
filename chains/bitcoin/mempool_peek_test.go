package bitcoin

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// peekNode is a fake Core whose mempool shape and best block a test sets;
// it counts getmempoolinfo calls.
type peekNode struct {
	mu    sync.Mutex
	shape mempoolShape
	tip   string
	peeks int
	seen  chan struct{} // receives after every getmempoolinfo
}

func (p *peekNode) set(shape mempoolShape, tip string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shape, p.tip = shape, tip
}

func (p *peekNode) handle(method string, _ []json.RawMessage) rpcReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch method {
	case "getmempoolinfo":
		p.peeks++
		select {
		case p.seen <- struct{}{}:
		default:
		}
		return rpcReply{result: map[string]any{"loaded": true, "size": p.shape.Size, "bytes": p.shape.Bytes, "usage": p.shape.Usage}}
	case "getbestblockhash":
		return rpcReply{result: p.tip}
	}
	return rpcReply{code: codeMethodNotFound, msg: "Method not found"}
}

// peeked waits until the node has answered n more getmempoolinfo calls.
func (p *peekNode) peeked(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-p.seen:
		case <-timeout:
			t.Fatalf("fewer than %d mempool peeks in 30 s", n)
		}
	}
}

// TestMempoolPeekWakesOnChangeOnly: an unchanged mempool does not wake; a
// new transaction does; and so does a new transaction of the very shape of
// one a block took out of the mempool between two peeks (a wallet's
// payments are often the same size), which the shape alone cannot tell.
func TestMempoolPeekWakesOnChangeOnly(t *testing.T) {
	node := &peekNode{tip: "a", seen: make(chan struct{}, 1)}
	c := newTestClient(t, payment.Litecoin, Regtest, fakeNode(t, node.handle))
	wakes := make(chan struct{}, 100)
	stop := c.peekMempool(context.Background(), func() { wakes <- struct{}{} })
	defer stop()
	quiet := func(what string) {
		t.Helper()
		node.peeked(t, 3)
		if len(wakes) > 0 {
			t.Fatalf("%s: %d wakes without a change", what, len(wakes))
		}
	}
	woken := func(what string) {
		t.Helper()
		select {
		case <-wakes:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no wake", what)
		}
		node.peeked(t, 2) // the wake's peek is over; nothing more is pending
		for len(wakes) > 0 {
			<-wakes
		}
	}
	quiet("empty mempool")
	tx := mempoolShape{Size: 1, Bytes: 141, Usage: 1008}
	node.set(tx, "a")
	woken("a transaction entered")
	quiet("the same mempool")
	// Mined and followed by a same-sized payment before the next peek.
	node.set(tx, "b")
	woken("a same-shaped transaction after a block")
	quiet("the same mempool on the new block")
}

// TestMempoolPeekIsOneRequest: a peek asks for the best block and the
// mempool's shape in one HTTP request (a JSON-RPC batch), so peeking every
// 150 ms costs the node under seven requests a second (issue 37 item 4).
func TestMempoolPeekIsOneRequest(t *testing.T) {
	node := &peekNode{tip: "a", seen: make(chan struct{}, 1)}
	var mu sync.Mutex
	var bodies []string
	url := fakeNode(t, func(method string, params []json.RawMessage) rpcReply { return node.handle(method, params) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		req, _ := http.NewRequest(r.Method, strings.Replace(url, "u:secret-pass@", "", 1), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer srv.Close()
	c := newTestClient(t, payment.Litecoin, Regtest, "http://u:secret-pass@"+srv.Listener.Addr().String())
	stop := c.peekMempool(context.Background(), func() {})
	node.peeked(t, 3)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) < 3 {
		t.Fatalf("%d requests for 3 peeks", len(bodies))
	}
	for _, b := range bodies {
		var calls []struct{ Method string }
		if err := json.Unmarshal([]byte(b), &calls); err != nil || len(calls) != 2 ||
			calls[0].Method != "getbestblockhash" || calls[1].Method != "getmempoolinfo" {
			t.Fatalf("a peek's request is not one batch of getbestblockhash and getmempoolinfo: %s", b)
		}
	}
	node.mu.Lock()
	defer node.mu.Unlock()
	if node.peeks != len(bodies) {
		t.Fatalf("%d getmempoolinfo calls in %d requests", node.peeks, len(bodies))
	}
}
