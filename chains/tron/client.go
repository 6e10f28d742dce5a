package tron

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/logs"
)

// ErrTransient marks a failure that goes away by itself: a network error or
// timeout, HTTP 429, 403 (TronGrid's throttle) or 5xx, or the node's own
// limiter answering "lack of computing resources". The scanner backs off and
// asks again.
var ErrTransient = errors.New("tron: transient node failure")

// ErrNodeError is the node answering HTTP 200 with an {"Error": "..."} body
// that is not a throttle (for example an exception inside java-tron).
var ErrNodeError = errors.New("tron: node error")

// ErrLiteNode is a lite full node refusing a history endpoint with its plain
// text "this API is closed because this node is a lite fullnode". Point the
// client at a full node.
var ErrLiteNode = errors.New("tron: node is a lite fullnode without history")

// ErrHTTPStatus is an HTTP status the node should never answer to a valid
// request (401 bad API key, 404 wrong URL, 405, ...); it is not retried.
var ErrHTTPStatus = errors.New("tron: unexpected HTTP status")

// MaxBatch is the most blocks one /wallet/getblockbylimitnext call returns.
const MaxBatch = 100

// maxBody bounds a response body: 100 full mainnet blocks stay far below it.
const maxBody = 256 << 20

// apiKeyHeader is TronGrid's API key header.
const apiKeyHeader = "TRON-PRO-API-KEY"

// Config configures a Client.
type Config struct {
	// URL is the node's HTTP API base, e.g. http://127.0.0.1:8090 or
	// https://api.trongrid.io. It must serve /wallet and /walletsolidity.
	URL string
	// APIKey is sent as TRON-PRO-API-KEY when set. It is never logged and
	// never appears in an error.
	APIKey string
	// USDTContract is the USDT TRC-20 contract, base58 T… or 41… hex
	// (mainnet TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t).
	USDTContract string
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
	// Log defaults to discarding.
	Log *slog.Logger
	// NeedInternalTx is true when the TRX method is served from this node:
	// VerifyChain then refuses a node that does not write
	// internal_transactions (ErrInternalTxNotSaved), since TRX a contract
	// sends would be missed.
	NeedInternalTx bool
	// InternalTxProbe is the id (64 hex digits) of a transaction of the
	// node's chain that has internal transactions; the node must answer
	// them for it. Empty: NileInternalTxProbe on Nile, else no check (a
	// warning).
	InternalTxProbe string
}

// Client reads TRX and USDT TRC-20 transfers from a java-tron node over its
// HTTP API. It is safe for concurrent use.
type Client struct {
	base   string
	apiKey string
	usdt   [20]byte
	hc     *http.Client
	log    *slog.Logger
	// needInternal, probe: Config.NeedInternalTx and InternalTxProbe;
	// internalOK: the probe succeeded; warnedNoProbe: the warning of no
	// probe was logged.
	needInternal  bool
	probe         string
	internalOK    atomic.Bool
	warnedNoProbe atomic.Bool
}

var _ chains.Source = (*Client)(nil)

// New validates cfg and returns a Client. It does not contact the node.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tron: Config.URL %q: want http(s)://host[:port]", cfg.URL)
	}
	contract, err := ParseAddress(cfg.USDTContract)
	if err != nil {
		return nil, fmt.Errorf("tron: Config.USDTContract: %w", err)
	}
	if cfg.InternalTxProbe != "" && !txIDPattern.MatchString(cfg.InternalTxProbe) {
		return nil, fmt.Errorf("tron: Config.InternalTxProbe %q: want a transaction id (64 lower-case hex digits)", cfg.InternalTxProbe)
	}
	c := &Client{
		base:         strings.TrimRight(cfg.URL, "/"),
		apiKey:       cfg.APIKey,
		hc:           cfg.HTTPClient,
		log:          cfg.Log,
		needInternal: cfg.NeedInternalTx,
		probe:        cfg.InternalTxProbe,
	}
	copy(c.usdt[:], contract)
	if c.hc == nil {
		c.hc = &http.Client{Timeout: 30 * time.Second}
	}
	c.log = logs.Or(c.log)
	c.log = c.log.With("component", "chains/tron", "network", "tron")
	return c, nil
}

// Tip returns the number of the node's current head block.
func (c *Client) Tip(ctx context.Context) (chains.Height, error) {
	ctx = endpoints.Pin(ctx, 0)
	n, err := c.nowBlock(ctx, "/wallet/getnowblock")
	if err == nil {
		endpoints.ObserveHead(ctx, int64(n))
	}
	return chains.Height(n), err
}

// FinalizedHeight returns the number of the latest solidified block: 19
// distinct super representatives have built on it and it cannot be reorged.
func (c *Client) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	n, err := c.nowBlock(ctx, "/walletsolidity/getnowblock")
	return chains.Height(n), err
}

func (c *Client) nowBlock(ctx context.Context, path string) (uint64, error) {
	body, err := c.post(ctx, path, nil)
	if err != nil {
		return 0, err
	}
	var b blockJSON
	if err := json.Unmarshal(body, &b); err != nil {
		return 0, fmt.Errorf("tron: %s: %w: %v", path, chains.ErrInvalidResponse, err)
	}
	if b.BlockID == "" || b.BlockHeader == nil {
		return 0, fmt.Errorf("tron: %s: %w: no blockID or block_header", path, chains.ErrInvalidResponse)
	}
	n, err := parseUint(b.BlockHeader.RawData.Number)
	if err != nil {
		return 0, fmt.Errorf("tron: %s: %w: number: %v", path, chains.ErrInvalidResponse, err)
	}
	return n, nil
}

// Block returns block height of the node's current chain with its TRX and
// USDT TRC-20 transfers to watched accounts. A height above the head is
// chains.ErrBlockNotFound.
func (c *Client) Block(ctx context.Context, at chains.Height, w chains.Watched) (chains.Block, error) {
	// Behind a pool of endpoints, the block and its transaction infos come
	// from one that showed the height.
	ctx = endpoints.Pin(ctx, int64(at))
	height := uint64(at)
	b, err := c.blockByNum(ctx, height)
	if err != nil {
		return chains.Block{}, err
	}
	out, err := c.assemble(ctx, height, b, w)
	out.Endpoint = endpoints.OnlyServer(ctx)
	return out, err
}

// blockByNum reads block height. {} from an endpoint of a pool that showed
// the height (a stale backend behind a load balancer) is refused and the
// block read from another (endpoints.Refuse); {} otherwise is
// chains.ErrBlockNotFound.
func (c *Client) blockByNum(ctx context.Context, height uint64) (*blockJSON, error) {
	for {
		body, err := c.post(ctx, "/wallet/getblockbynum", numBody(height))
		if err != nil {
			return nil, fmt.Errorf("tron: block %d: %w", height, err)
		}
		if isEmptyObject(body) {
			if endpoints.Refuse(ctx, "no block at a height it showed") {
				continue
			}
			return nil, fmt.Errorf("tron: block %d: %w", height, chains.ErrBlockNotFound)
		}
		b := new(blockJSON)
		if err := json.Unmarshal(body, b); err != nil {
			return nil, fmt.Errorf("tron: block %d: %w: %v", height, chains.ErrInvalidResponse, err)
		}
		return b, nil
	}
}

// Blocks returns the blocks from (inclusive) to to (exclusive) using
// /wallet/getblockbylimitnext, MaxBatch blocks per request. It stops early at
// the node's head; when from itself is above the head it returns
// chains.ErrBlockNotFound. The blocks are consecutive and each carries its
// transfers exactly as Block would report them.
func (c *Client) Blocks(ctx context.Context, low, high chains.Height, w chains.Watched) ([]chains.Block, error) {
	ctx = endpoints.Pin(ctx, int64(low))
	from, to := uint64(low), uint64(high)
	if to <= from {
		return nil, fmt.Errorf("tron: blocks [%d, %d): empty range", from, to)
	}
	var out []chains.Block
	for start := from; start < to; {
		end := min(to, start+MaxBatch)
		body, err := c.post(ctx, "/wallet/getblockbylimitnext",
			[]byte(`{"startNum":`+strconv.FormatUint(start, 10)+`,"endNum":`+strconv.FormatUint(end, 10)+`}`))
		if err != nil {
			return nil, fmt.Errorf("tron: blocks [%d, %d): %w", start, end, err)
		}
		var list struct {
			Block *[]blockJSON `json:"block"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, fmt.Errorf("tron: blocks [%d, %d): %w: %v", start, end, chains.ErrInvalidResponse, err)
		}
		if list.Block == nil {
			// The node answers {} only to a range it considers invalid:
			// from an endpoint of a pool that showed start (a stale
			// backend), the range is asked of another.
			if endpoints.Refuse(ctx, "no blocks from a height it showed") {
				continue
			}
			return nil, fmt.Errorf("tron: blocks [%d, %d): %w: no \"block\" list", start, end, chains.ErrInvalidResponse)
		}
		got := uint64(len(*list.Block))
		if got > end-start {
			return nil, fmt.Errorf("tron: blocks [%d, %d): %w: %d blocks", start, end, chains.ErrInvalidResponse, got)
		}
		for i := range *list.Block {
			b := &(*list.Block)[i]
			blk, err := c.assemble(ctx, start+uint64(i), b, w)
			if err != nil {
				return nil, err
			}
			blk.Endpoint = endpoints.OnlyServer(ctx)
			out = append(out, blk)
		}
		if got < end-start {
			break // head reached
		}
		start = end
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tron: block %d: %w", from, chains.ErrBlockNotFound)
	}
	return out, nil
}

// assemble checks a decoded block against the height asked for, and fetches
// the block's transaction infos when a contract ran in it.
// When the infos turn out to be another fork's (the node switched forks
// between the two calls), it reads the block by number again and its infos
// with it, up to pairAttempts times, then gives up with ErrTransient.
func (c *Client) assemble(ctx context.Context, height uint64, b *blockJSON, w chains.Watched) (chains.Block, error) {
	for attempt := 1; ; attempt++ {
		blk, err := c.pair(ctx, height, b, w)
		if !errors.Is(err, errInfoMismatch) || attempt == pairAttempts {
			return blk, err
		}
		c.log.WarnContext(ctx, "tron block and its transaction infos disagree; reading both again",
			"height", height, "block", b.BlockID, "attempt", attempt)
		// Behind a pool, the endpoint whose infos are not its own block's
		// is turned away: both are read again from another.
		endpoints.Refuse(ctx, "transaction infos not of the block it served")
		if b, err = c.blockByNum(ctx, height); err != nil {
			return chains.Block{}, err
		}
	}
}

// pairAttempts bounds how often assemble reads a block and its infos again.
const pairAttempts = 3

func (c *Client) pair(ctx context.Context, height uint64, b *blockJSON, w chains.Watched) (chains.Block, error) {
	needInfos, err := checkBlock(height, b)
	if err != nil {
		return chains.Block{}, err
	}
	var infos []txInfoJSON
	if needInfos {
		if infos, err = c.txInfos(ctx, height); err != nil {
			return chains.Block{}, err
		}
	}
	return c.match(height, b, infos, w)
}

// txInfos fetches the TransactionInfo list of block height.
func (c *Client) txInfos(ctx context.Context, height uint64) ([]txInfoJSON, error) {
	body, err := c.post(ctx, "/wallet/gettransactioninfobyblocknum", numBody(height))
	if err != nil {
		return nil, fmt.Errorf("tron: block %d infos: %w", height, err)
	}
	infos, err := decodeInfos(height, body)
	if err != nil {
		return nil, err
	}
	return infos, nil
}

// post sends one API call and returns a body that is JSON and not an
// {"Error": ...} answer. The API key goes in a header and never into an
// error or a log line.
func (c *Client) post(ctx context.Context, path string, body []byte) ([]byte, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("tron: %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set(apiKeyHeader, c.apiKey)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tron: %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrTransient, path, redact(err, c.apiKey))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tron: %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s: reading body: %v", ErrTransient, path, redact(err, c.apiKey))
	}
	c.log.DebugContext(ctx, "tron api call", "path", path, "status", resp.StatusCode,
		"bytes", len(data), "duration", time.Since(start))
	if len(data) > maxBody {
		return nil, fmt.Errorf("tron: %s: %w: body larger than %d bytes", path, chains.ErrInvalidResponse, maxBody)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
	case code == http.StatusTooManyRequests || code == http.StatusForbidden || code >= 500:
		return nil, fmt.Errorf("%w: %s: HTTP %d%s", ErrTransient, path, code, nodeMessage(data, c.apiKey))
	default:
		return nil, fmt.Errorf("%w: %s: HTTP %d%s", ErrHTTPStatus, path, code, nodeMessage(data, c.apiKey))
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		if bytes.Contains(trimmed, []byte("lite fullnode")) {
			return nil, fmt.Errorf("%w: %s: %q", ErrLiteNode, path, clip(trimmed))
		}
		return nil, fmt.Errorf("tron: %s: %w: not JSON: %q", path, chains.ErrInvalidResponse, clip(trimmed))
	}
	if trimmed[0] == '{' && len(trimmed) < 4096 && bytes.Contains(trimmed, []byte(`"Error"`)) {
		var e struct {
			Error *string `json:"Error"`
		}
		if json.Unmarshal(trimmed, &e) == nil && e.Error != nil {
			msg := redactString(*e.Error, c.apiKey)
			if strings.Contains(msg, "lack of computing resources") {
				return nil, fmt.Errorf("%w: %s: %s", ErrTransient, path, msg)
			}
			return nil, fmt.Errorf("%w: %s: %s", ErrNodeError, path, msg)
		}
	}
	return trimmed, nil
}

func numBody(n uint64) []byte {
	return []byte(`{"num":` + strconv.FormatUint(n, 10) + `}`)
}

func isEmptyObject(body []byte) bool {
	return bytes.Equal(bytes.TrimSpace(body), []byte("{}"))
}

// nodeMessage renders the node's short error body for an HTTP error.
func nodeMessage(body []byte, apiKey string) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var e struct {
		Error string `json:"Error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return ": " + redactString(e.Error, apiKey)
	}
	return ": " + redactString(strconv.Quote(string(clip(body))), apiKey)
}

func clip(b []byte) []byte {
	if len(b) > 120 {
		return b[:120]
	}
	return b
}

// redact removes the API key from an error text, should a transport error
// ever echo a header back.
func redact(err error, apiKey string) string {
	return redactString(err.Error(), apiKey)
}

func redactString(s, apiKey string) string {
	if apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, apiKey, "[redacted]")
}

func parseUint(n json.Number) (uint64, error) {
	if n == "" {
		return 0, nil // proto3 JSON omits zero values
	}
	return strconv.ParseUint(string(n), 10, 64)
}
