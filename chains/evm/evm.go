package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"syscall"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
)

// TransferTopic is topic0 of the ERC-20 event Transfer(address,address,uint256).
var TransferTopic = common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")

// The trace settings of Config.Trace and the modes TraceMode reports.
const (
	// TraceAuto probes debug_traceBlockByHash with the callTracer at start
	// and uses it when the node answers.
	TraceAuto = "auto"
	// TraceOn requires tracing; New fails when the node cannot trace.
	TraceOn = "on"
	// TraceOff never traces.
	TraceOff = "off"
	// ModeTrace is TraceMode when internal transfers are found by tracing.
	ModeTrace = "trace"
	// ModeBalanceCheck is TraceMode when they are not: the caller reconciles
	// watched balances with Balances instead.
	ModeBalanceCheck = "balance_check"
)

// keyedTraceDepth is how deep the call tree was walked before deeper frames
// were recorded too (the top-level call is depth 0). Frames down to it are
// numbered first, in the order that walk gave them, and deeper frames after
// them, so the natural key (txid, index) of an internal transfer recorded
// then is the same now and a rescan over old blocks records nothing twice.
const keyedTraceDepth = 8

// maxCallDepth is the EVM's call depth limit: a trace nested deeper is not a
// trace of a real transaction.
const maxCallDepth = 1024

// balanceBatch is the number of eth_getBalance calls sent in one batch; geth
// refuses batches above 1000 items by default.
const balanceBatch = 500

// DefaultMaxResponseBytes bounds one response body (HTTP) or message
// (websocket), as the other chain clients do: a full block with receipts
// and traces stays well below it.
const DefaultMaxResponseBytes = 64 << 20

// ErrResponseTooLarge is a node answer above Config.MaxResponseBytes; it
// wraps chains.ErrInvalidResponse.
var ErrResponseTooLarge = fmt.Errorf("%w: node response too large", chains.ErrInvalidResponse)

// Token is an ERC-20 contract whose transfers count as payments in Asset.
type Token struct {
	// Asset is the token's symbol (payment.USDT, payment.USDC).
	Asset payment.Asset
	// Contract is the token contract; only logs emitted by it count.
	Contract common.Address
}

// Config configures a Client.
type Config struct {
	// URL is the node's JSON-RPC endpoint (http, https, ws or wss).
	URL string
	// Tokens are the only contracts whose Transfer events count.
	Tokens []Token
	// Trace is TraceAuto (the default when empty), TraceOn or TraceOff.
	Trace string
	// HTTPClient, when set, carries the HTTP requests (timeouts, proxies).
	HTTPClient *http.Client
	// NotifyURL is the websocket endpoint for eth_subscribe; empty means URL
	// itself when it is ws or wss, else URL with http(s) turned into ws(s)
	// (geth and anvil serve both on one port).
	NotifyURL string
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// MaxResponseBytes bounds a response; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Client reads Ethereum blocks from one JSON-RPC node. It is safe for
// concurrent use.
type Client struct {
	rpc       *rpc.Client
	log       *slog.Logger
	tokens    map[common.Address]payment.Asset
	contracts []common.Address
	trace     bool
	notifyURL string
	// noBlockReceipts is set once the node answered eth_getBlockReceipts with
	// "method not found"; receipts are then fetched per matching transaction.
	noBlockReceipts atomic.Bool
}

var (
	_ chains.Source   = (*Client)(nil)
	_ chains.Notifier = (*Client)(nil)
)

// New connects to cfg.URL, checks that the node answers and, in auto mode,
// probes whether it can trace blocks.
func New(ctx context.Context, cfg Config) (*Client, error) {
	c, err := newClient(ctx, cfg)
	// The URL may hold credentials or an API key: errors name its host.
	return c, chains.RedactError(err)
}

func newClient(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("evm: empty node URL")
	}
	c := &Client{log: cfg.Log, tokens: make(map[common.Address]payment.Asset, len(cfg.Tokens)), notifyURL: chains.NotifyURL(cfg.NotifyURL, cfg.URL)}
	c.log = logs.Or(c.log)
	for _, t := range cfg.Tokens {
		if t.Contract == (common.Address{}) {
			return nil, fmt.Errorf("evm: token %s has no contract address", t.Asset)
		}
		if t.Asset == "" || t.Asset == payment.Native {
			return nil, fmt.Errorf("evm: token contract %s needs a token asset, not %q", t.Contract, t.Asset)
		}
		if _, dup := c.tokens[t.Contract]; dup {
			return nil, fmt.Errorf("evm: token contract %s configured twice", t.Contract)
		}
		c.tokens[t.Contract] = t.Asset
		c.contracts = append(c.contracts, t.Contract)
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	opts := []rpc.ClientOption{rpc.WithHTTPClient(cappedHTTPClient(cfg.HTTPClient, cfg.MaxResponseBytes)),
		rpc.WithWebsocketMessageSizeLimit(cfg.MaxResponseBytes)}
	var err error
	if c.rpc, err = rpc.DialOptions(ctx, cfg.URL, opts...); err != nil {
		return nil, fmt.Errorf("evm: dial %s: %w", chains.NodeHost(cfg.URL), err)
	}
	switch cfg.Trace {
	case TraceOff:
		if _, err := c.Tip(ctx); err != nil {
			c.rpc.Close()
			return nil, err
		}
	case "", TraceAuto, TraceOn:
		ok, why, err := c.probeTrace(ctx)
		if err != nil {
			c.rpc.Close()
			return nil, err
		}
		if !ok && cfg.Trace == TraceOn {
			c.rpc.Close()
			return nil, fmt.Errorf("evm: tracing required but the node cannot trace: %s", why)
		}
		c.trace = ok
		if !ok {
			c.log.Info("node cannot trace blocks; internal ETH transfers need the balance check", "reason", chains.RedactText(why))
		}
	default:
		return nil, fmt.Errorf("evm: trace setting %q: want auto, on or off", cfg.Trace)
	}
	return c, nil
}

// Close closes the connection to the node.
func (c *Client) Close() { c.rpc.Close() }

// TraceMode returns ModeTrace when internal ETH transfers are found with
// debug_traceBlockByHash, else ModeBalanceCheck.
func (c *Client) TraceMode() string {
	if c.trace {
		return ModeTrace
	}
	return ModeBalanceCheck
}

// probeTrace traces the latest block. A node error (method not found, not
// allowed, tracer unknown) means no tracing; a transport error is returned.
func (c *Client) probeTrace(ctx context.Context) (ok bool, why string, err error) {
	var head *rpcHeader
	if err := c.rpc.CallContext(ctx, &head, "eth_getBlockByNumber", "latest", false); err != nil {
		return false, "", classify(err, "eth_getBlockByNumber(latest)")
	}
	if head == nil || head.Hash == nil {
		return false, "", fmt.Errorf("eth_getBlockByNumber(latest): no block: %w", chains.ErrInvalidResponse)
	}
	var traces []json.RawMessage
	err = c.rpc.CallContext(ctx, &traces, "debug_traceBlockByHash", *head.Hash, tracerConfig)
	if err == nil {
		return true, "", nil
	}
	var rerr rpc.Error
	var herr rpc.HTTPError
	if errors.As(err, &rerr) || errors.As(err, &herr) {
		return false, err.Error(), nil
	}
	return false, "", classify(err, "debug_traceBlockByHash")
}

var tracerConfig = map[string]any{"tracer": "callTracer"}

// Tip returns the node's latest block number (eth_blockNumber).
func (c *Client) Tip(ctx context.Context) (chains.Height, error) {
	ctx = endpoints.Pin(ctx, 0)
	var n *hexutil.Uint64
	if err := c.rpc.CallContext(ctx, &n, "eth_blockNumber"); err != nil {
		return 0, classify(err, "eth_blockNumber")
	}
	if n == nil {
		return 0, fmt.Errorf("eth_blockNumber: null: %w", chains.ErrInvalidResponse)
	}
	endpoints.ObserveHead(ctx, int64(*n))
	return chains.Height(*n), nil
}

// FinalizedHeight returns the number of the "finalized" block, or 0 when the
// node does not know the tag (pre-merge chains, old nodes).
func (c *Client) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	var h *rpcHeader
	err := c.rpc.CallContext(ctx, &h, "eth_getBlockByNumber", "finalized", false)
	var rerr rpc.Error
	if errors.As(err, &rerr) {
		c.log.Debug("node has no finalized block", "err", chains.RedactError(err))
		return 0, nil
	}
	if err != nil {
		return 0, classify(err, "eth_getBlockByNumber(finalized)")
	}
	if h == nil {
		return 0, nil
	}
	if h.Number == nil {
		return 0, fmt.Errorf("eth_getBlockByNumber(finalized): no number: %w", chains.ErrInvalidResponse)
	}
	return chains.Height(*h.Number), nil
}

// Balances returns the wei balance of each account at height, with
// eth_getBalance calls batched 500 at a time. It serves the balance check
// that catches internal ETH transfers when the node cannot trace.
func (c *Client) Balances(ctx context.Context, accounts []common.Address, height chains.Height) (map[common.Address]*big.Int, error) {
	out := make(map[common.Address]*big.Int, len(accounts))
	for start := 0; start < len(accounts); start += balanceBatch {
		chunk := accounts[start:min(start+balanceBatch, len(accounts))]
		res := make([]*hexutil.Big, len(chunk))
		batch := make([]rpc.BatchElem, len(chunk))
		for i, a := range chunk {
			batch[i] = rpc.BatchElem{Method: "eth_getBalance", Args: []any{a, hexutil.Uint64(height)}, Result: &res[i]}
		}
		if err := c.rpc.BatchCallContext(ctx, batch); err != nil {
			return nil, classify(err, fmt.Sprintf("eth_getBalance at height %d", height))
		}
		for i, el := range batch {
			if el.Error != nil {
				return nil, classify(el.Error, fmt.Sprintf("eth_getBalance(%s) at height %d", chunk[i], height))
			}
			if res[i] == nil || res[i].ToInt().Sign() < 0 {
				return nil, fmt.Errorf("eth_getBalance(%s) at height %d: no balance: %w", chunk[i], height, chains.ErrInvalidResponse)
			}
			out[chunk[i]] = res[i].ToInt()
		}
	}
	return out, nil
}

// classify wraps err from a call named what. Node errors (JSON-RPC error
// objects, HTTP statuses), transport errors and cancellations are wrapped as
// they are; anything else comes from an answer that does not parse, lacks a
// result or misses a batch element, and wraps chains.ErrInvalidResponse.
func classify(err error, what string) error {
	if isNodeOrTransportError(err) || errors.Is(err, chains.ErrInvalidResponse) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w: %v", what, chains.ErrInvalidResponse, err)
}

// isNodeOrTransportError reports whether err is the node saying no (a
// JSON-RPC error, an HTTP status) or the connection failing, as opposed to
// an answer that cannot be decoded.
func isNodeOrTransportError(err error) bool {
	var rerr rpc.Error
	var herr rpc.HTTPError
	var uerr *url.Error
	var nerr net.Error
	return errors.As(err, &rerr) || errors.As(err, &herr) || errors.As(err, &uerr) || errors.As(err, &nerr) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, rpc.ErrClientQuit) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// cappedHTTPClient returns a copy of hc (nil: a default client) whose
// response bodies fail with ErrResponseTooLarge past max bytes.
func cappedHTTPClient(hc *http.Client, max int64) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = cappedTransport{base: base, max: max}
	return c
}

type cappedTransport struct {
	base http.RoundTripper
	max  int64
}

func (t cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// cappedBody reads at most max bytes; one more is ErrResponseTooLarge.
type cappedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("%w: larger than %d bytes", ErrResponseTooLarge, b.max)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - int(-b.left), fmt.Errorf("%w: larger than %d bytes", ErrResponseTooLarge, b.max)
	}
	return n, err
}
