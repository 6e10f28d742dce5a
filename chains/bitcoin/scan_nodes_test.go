package bitcoin_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

// nodeCtx bounds one node call made by a scenario.
func nodeCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// payNode is a regtest node the scenarios pay from and mine on: btcd with
// its faucet, or litecoind with its wallet.
type payNode interface {
	// Pay broadcasts one transaction paying base units to each address; it
	// does not mine.
	Pay(t testing.TB, outs map[string]int64) string
	// Mine mines n blocks.
	Mine(t testing.TB, n int)
	Tip(t testing.TB) int64
	BlockHash(t testing.TB, height int64) string
	// Invalidate invalidates a block; its transactions go back to the
	// mempool and the next block mined differs from it.
	Invalidate(t testing.TB, hash string)
	Mempool(t testing.TB) []string
}

// btcdNode pays from the devnet faucet.
type btcdNode struct{ node *devnet.Btcd }

func startBtcd(t testing.TB) *btcdNode {
	t.Helper()
	node, err := devnet.StartBtcd(nodeCtx(t), t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	return &btcdNode{node: node}
}

func (b *btcdNode) Pay(t testing.TB, outs map[string]int64) string {
	t.Helper()
	var outputs []devnet.Output
	for addr, amount := range outs {
		a, err := addresses.ParseAddress(payment.Bitcoin, "regtest", addr)
		if err != nil {
			t.Fatalf("parse %s: %v", addr, err)
		}
		outputs = append(outputs, devnet.Output{Script: a.Key, Amount: amount})
	}
	txid, err := b.node.PayMany(nodeCtx(t), outputs)
	if err != nil {
		t.Fatal(err)
	}
	return txid
}

func (b *btcdNode) Mine(t testing.TB, n int) {
	t.Helper()
	if _, err := b.node.Generate(nodeCtx(t), n); err != nil {
		t.Fatal(err)
	}
}

func (b *btcdNode) Tip(t testing.TB) int64 {
	t.Helper()
	tip, err := b.node.Tip(nodeCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

func (b *btcdNode) BlockHash(t testing.TB, h int64) string {
	t.Helper()
	hash, err := b.node.BlockHash(nodeCtx(t), h)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// Invalidate also sends a faucet transaction so that the replacement block
// cannot repeat the invalidated one (same parent, transactions and second).
func (b *btcdNode) Invalidate(t testing.TB, hash string) {
	t.Helper()
	if err := b.node.InvalidateBlock(nodeCtx(t), hash); err != nil {
		t.Fatal(err)
	}
	if _, err := b.node.Pay(nodeCtx(t), b.node.FaucetScript(), 10_000); err != nil {
		t.Fatal(err)
	}
}

func (b *btcdNode) Mempool(t testing.TB) []string {
	t.Helper()
	var ids []string
	if err := b.node.Call(nodeCtx(t), "getrawmempool", &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// litecoindNode pays from the node's wallet.
type litecoindNode struct {
	node *devnet.Litecoind
	dir  string
	mweb bool
}

func startLitecoind(t testing.TB, mweb bool) *litecoindNode {
	t.Helper()
	dir := t.TempDir()
	node, err := devnet.StartLitecoind(nodeCtx(t), dir, 0, mweb)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "litecoind", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	l := &litecoindNode{node: node, dir: dir, mweb: mweb}
	t.Cleanup(func() { l.node.Stop() })
	return l
}

// Restart stops litecoind and starts it again on the same data directory
// and RPC port.
func (l *litecoindNode) Stop() { l.node.Stop() }

func (l *litecoindNode) Start(t testing.TB) {
	t.Helper()
	node, err := devnet.StartLitecoind(nodeCtx(t), l.dir, l.node.RPCPort, l.mweb)
	if err != nil {
		t.Fatal(err)
	}
	l.node = node
}

func (l *litecoindNode) Pay(t testing.TB, outs map[string]int64) string {
	t.Helper()
	var txid string
	var err error
	if len(outs) == 1 {
		for addr, amount := range outs {
			txid, err = l.node.SendToAddress(nodeCtx(t), addr, amount)
		}
	} else {
		txid, err = l.node.SendMany(nodeCtx(t), outs)
	}
	if err != nil {
		t.Fatal(err)
	}
	return txid
}

func (l *litecoindNode) Mine(t testing.TB, n int) {
	t.Helper()
	if _, err := l.node.Generate(nodeCtx(t), n); err != nil {
		t.Fatal(err)
	}
}

func (l *litecoindNode) Tip(t testing.TB) int64 {
	t.Helper()
	tip, err := l.node.Tip(nodeCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

func (l *litecoindNode) BlockHash(t testing.TB, h int64) string {
	t.Helper()
	hash, err := l.node.BlockHash(nodeCtx(t), h)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

func (l *litecoindNode) Invalidate(t testing.TB, hash string) {
	t.Helper()
	if err := l.node.InvalidateBlock(nodeCtx(t), hash); err != nil {
		t.Fatal(err)
	}
}

func (l *litecoindNode) Mempool(t testing.TB) []string {
	t.Helper()
	var ids []string
	if err := l.node.Call(nodeCtx(t), "getrawmempool", &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// newClient returns a regtest Client for url. Keep-alive is off for
// litecoind: Litecoin Core's shutdown waits for open keep-alive connections.
func newClient(t testing.TB, network payment.Network, url string, keepAlive bool) *bitcoin.Client {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := bitcoin.New(bitcoin.Config{Network: network, Chain: bitcoin.Regtest, URL: url,
		HTTPClient: &http.Client{Transport: tr, Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tcpProxy forwards a loopback port to a node's RPC port. Cut closes the
// listener and every open connection (the node looks down); Restore listens
// again on the same port.
type tcpProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

func startProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.ln = ln
	go p.serve(ln)
	t.Cleanup(p.Cut)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // cut meanwhile
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *tcpProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut makes the node unreachable through the proxy.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore listens on the proxy's port again.
func (p *tcpProxy) Restore(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}

// URL returns the node's RPC URL with the proxy's address.
func (p *tcpProxy) URL(nodeURL string) string {
	i := strings.LastIndex(nodeURL, "@")
	return nodeURL[:i+1] + p.addr
}

// jsonOf decodes an API body or fails.
func jsonOf(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}
