package bitcoin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	btcchaincfg "github.com/btcsuite/btcd/chaincfg"
	ltcchaincfg "github.com/ltcsuite/ltcd/chaincfg"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
)

// Chain names accepted in Config.Chain.
const (
	Mainnet = "mainnet"
	Testnet = "testnet" // Bitcoin testnet3, Litecoin testnet4
	Regtest = "regtest"
)

// DefaultMaxResponseBytes bounds one RPC response body: a 4 MB-weight block
// is at most 8 MB of hex; Litecoin's MWEB extension block adds to that.
const DefaultMaxResponseBytes = 64 << 20

// ErrWrongChain is returned by Health and VerifyChain when the node runs
// another chain than Config.Chain (a testnet node behind a mainnet config):
// chains.ErrWrongChain itself.
var ErrWrongChain = chains.ErrWrongChain

// ErrNotReady is returned by Health while the node is still in initial block
// download: its tip is not the network's.
var ErrNotReady = errors.New("node is still syncing")

// Config configures a Client.
type Config struct {
	// Network is payment.Bitcoin or payment.Litecoin.
	Network payment.Network
	// Chain is Mainnet (default), Testnet or Regtest; it selects the address
	// encoding and is checked against the node by Health.
	Chain string
	// URL is the node's RPC endpoint, http(s)://user:pass@host:port. The
	// password never appears in errors or logs.
	URL string
	// CookieFile is the node's .cookie file, used when URL has no user info.
	CookieFile string
	// HTTPClient carries the requests; nil means a client with a 60 s timeout.
	HTTPClient *http.Client
	// MaxResponseBytes bounds a response body; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// ZMQURL is a Bitcoin Core or Litecoin Core ZMQ publisher
	// (tcp://host:port, the node's -zmqpubhashblock and -zmqpubhashtx or
	// -zmqpubrawtx address). When set, Notify subscribes there instead of
	// long-polling waitfornewblock and peeking at the mempool.
	ZMQURL string
	// Pooled says that HTTPClient sends through an endpoint pool
	// (chains/endpoints), so URL names no node: btcd, which notifies only
	// on its websocket, is then polled (Notify returns
	// chains.ErrNotifyUnsupported) rather than dialled at URL's host.
	Pooled bool
	// Log receives warnings; nil discards them.
	Log *slog.Logger
}

// Client reads blocks and the mempool of a Bitcoin Core, btcd or Litecoin
// Core node over JSON-RPC and matches their outputs against watched scripts.
// It is safe for concurrent use.
type Client struct {
	network payment.Network
	chain   string
	rpc     *rpcClient
	codec   codec
	log     *slog.Logger
	raw     sync.Pool // *[]byte, decoded block bytes

	mempoolMu sync.Mutex
	mempool   map[string]mempoolTx // decoded mempool transactions by txid

	zmqURL string // Config.ZMQURL
	pooled bool   // Config.Pooled
}

var (
	_ chains.Source        = (*Client)(nil)
	_ chains.PendingSource = (*Client)(nil)
	_ chains.ChainVerifier = (*Client)(nil)
)

// New validates cfg and returns a Client. It does not contact the node; call
// Health for that.
func New(cfg Config) (*Client, error) {
	if cfg.Chain == "" {
		cfg.Chain = Mainnet
	}
	var cd codec
	switch cfg.Network {
	case payment.Bitcoin:
		p := map[string]*btcchaincfg.Params{
			Mainnet: &btcchaincfg.MainNetParams, Testnet: &btcchaincfg.TestNet3Params, Regtest: &btcchaincfg.RegressionNetParams,
		}[cfg.Chain]
		if p == nil {
			return nil, fmt.Errorf("bitcoin: Chain: want mainnet, testnet or regtest, got %q", cfg.Chain)
		}
		cd = btcCodec{params: p}
	case payment.Litecoin:
		p := map[string]*ltcchaincfg.Params{
			Mainnet: &ltcchaincfg.MainNetParams, Testnet: &ltcchaincfg.TestNet4Params, Regtest: &ltcchaincfg.RegressionNetParams,
		}[cfg.Chain]
		if p == nil {
			return nil, fmt.Errorf("litecoin: Chain: want mainnet, testnet or regtest, got %q", cfg.Chain)
		}
		cd = ltcCodec{params: p}
	default:
		return nil, fmt.Errorf("bitcoin: Network: want bitcoin or litecoin, got %q", cfg.Network)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	cfg.Log = logs.Or(cfg.Log)
	rpc, err := newRPCClient(cfg.URL, cfg.CookieFile, cfg.HTTPClient, cfg.MaxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Network, err)
	}
	return &Client{
		network: cfg.Network,
		chain:   cfg.Chain,
		rpc:     rpc,
		codec:   cd,
		log:     cfg.Log.With("component", "chainsource", "network", string(cfg.Network)),
		mempool: make(map[string]mempoolTx),
		zmqURL:  cfg.ZMQURL,
		pooled:  cfg.Pooled,
	}, nil
}

// Network returns the network the client serves.
func (c *Client) Network() payment.Network { return c.network }

// Tip returns the height of the node's best block (getblockcount).
func (c *Client) Tip(ctx context.Context) (chains.Height, error) {
	ctx = endpoints.Pin(ctx, 0)
	var n int64
	if err := c.rpc.call(ctx, "getblockcount", &n); err != nil {
		return 0, fmt.Errorf("%s: tip: %w", c.network, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s: tip: %w: getblockcount %d", c.network, chains.ErrInvalidResponse, n)
	}
	endpoints.ObserveHead(ctx, n)
	return chains.Height(n), nil
}

// FinalizedHeight returns 0: proof-of-work chains have no finality; the
// scanner relies on confirmations and its reorg walk-back.
func (c *Client) FinalizedHeight(context.Context) (chains.Height, error) { return 0, nil }

// blockHash returns the hash of the block at height on the best chain.
func (c *Client) blockHash(ctx context.Context, height chains.Height) (string, error) {
	// btcd truncates the height to int32: never let a huge height wrap.
	if height < 0 || height > math.MaxInt32 {
		return "", chains.ErrBlockNotFound
	}
	var hash string
	err := c.rpc.call(ctx, "getblockhash", &hash, heightParam(height))
	var re *RPCError
	if errors.As(err, &re) && (re.Code == codeInvalidParameter || re.Code == codeMisc) &&
		strings.Contains(strings.ToLower(re.Message), "out of range") {
		return "", fmt.Errorf("%w: %v", chains.ErrBlockNotFound, err)
	}
	if err != nil {
		return "", err
	}
	if len(hash) != 64 {
		return "", fmt.Errorf("%w: getblockhash: %q is not a block hash", chains.ErrInvalidResponse, hash)
	}
	return hash, nil
}

// rawBlock fetches the serialized block with the given hash into a pooled
// buffer; the caller returns it with c.putRaw.
func (c *Client) rawBlock(ctx context.Context, hash string) (*[]byte, error) {
	bp, _ := c.raw.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b, err := c.rpc.callHex(ctx, "getblock", (*bp)[:0], hash, 0)
	*bp = b
	if err != nil {
		c.putRaw(bp)
		return nil, err
	}
	if len(b) < 80 {
		c.putRaw(bp)
		return nil, fmt.Errorf("%w: getblock %s: %d bytes is shorter than a block header", chains.ErrInvalidResponse, hash, len(b))
	}
	return bp, nil
}

func (c *Client) putRaw(bp *[]byte) {
	if cap(*bp) <= 32<<20 {
		c.raw.Put(bp)
	}
}

// RawBlock returns the serialized block at height on the best chain, as the
// node sends it (getblockhash, then getblock <hash> 0). The slice is the
// caller's.
func (c *Client) RawBlock(ctx context.Context, height chains.Height) ([]byte, error) {
	ctx = endpoints.Pin(ctx, int64(height))
	for {
		b, err := c.rawBlockAt(ctx, height)
		if endpoints.Again(ctx, err, "block not found at a height it showed") {
			continue
		}
		return b, err
	}
}

// rawBlockAt is RawBlock's reads, pinned to one endpoint.
func (c *Client) rawBlockAt(ctx context.Context, height chains.Height) ([]byte, error) {
	hash, err := c.blockHash(ctx, height)
	if err != nil {
		return nil, fmt.Errorf("%s: block %d: %w", c.network, height, err)
	}
	bp, err := c.rawBlock(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("%s: block %d: %w", c.network, height, err)
	}
	defer c.putRaw(bp)
	return append([]byte(nil), *bp...), nil
}

// Block returns the block at height on the node's best chain with every
// output paying a script that w contains, in block order (HogEx outputs
// included on Litecoin). A height above the tip is chains.ErrBlockNotFound; a
// block that does not decode, or whose hash is not the one asked for, is
// chains.ErrInvalidResponse.
func (c *Client) Block(ctx context.Context, height chains.Height, w chains.Watched) (chains.Block, error) {
	// Behind a pool of endpoints, the hash and the block come from one
	// that showed the height.
	ctx = endpoints.Pin(ctx, int64(height))
	for {
		b, err := c.block(ctx, height, w)
		if endpoints.Again(ctx, err, "block not found at a height it showed") {
			continue
		}
		return b, err
	}
}

// block is Block's reads, pinned to one endpoint.
func (c *Client) block(ctx context.Context, height chains.Height, w chains.Watched) (chains.Block, error) {
	hash, err := c.blockHash(ctx, height)
	if err != nil {
		return chains.Block{}, fmt.Errorf("%s: block %d: %w", c.network, height, err)
	}
	bp, err := c.rawBlock(ctx, hash)
	if err != nil {
		return chains.Block{}, fmt.Errorf("%s: block %d: %w", c.network, height, err)
	}
	d, err := recovered(func() (decodedBlock, error) { return c.codec.block(*bp, w) })
	c.putRaw(bp)
	if err != nil {
		return chains.Block{}, fmt.Errorf("%s: block %d (%s): %w: %v", c.network, height, hash, chains.ErrInvalidResponse, err)
	}
	if d.hash != hash {
		return chains.Block{}, fmt.Errorf("%s: block %d: %w: asked for %s, got a block hashing to %s",
			c.network, height, chains.ErrInvalidResponse, hash, d.hash)
	}
	return chains.Block{
		BlockRef:  chains.BlockRef{Height: height, Hash: d.hash, Parent: d.parent},
		Time:      d.time,
		Transfers: d.transfers,
		Endpoint:  endpoints.OnlyServer(ctx),
	}, nil
}

// blockchainInfo is the part of getblockchaininfo Health reads.
type blockchainInfo struct {
	Chain                string `json:"chain"`
	Blocks               int64  `json:"blocks"`
	Headers              int64  `json:"headers"`
	InitialBlockDownload bool   `json:"initialblockdownload"`
}

// nodeChains maps Config.Chain to the names nodes report: Bitcoin Core and
// Litecoin Core say main/test/regtest, btcd says mainnet/testnet3/regtest.
var nodeChains = map[string][]string{
	Mainnet: {"main", "mainnet"},
	Testnet: {"test", "testnet", "testnet3", "testnet4"},
	Regtest: {"regtest"},
}

// VerifyChain checks that the node runs chain (getblockchaininfo's chain
// name), whatever its sync state.
func (c *Client) VerifyChain(ctx context.Context, chain string) error {
	var info blockchainInfo
	if err := c.rpc.call(ctx, "getblockchaininfo", &info); err != nil {
		// The scanner says "chain identity"; the RPC error names the method.
		return fmt.Errorf("%s: %w", c.network, err)
	}
	if err := c.checkChain(info.Chain, chain); err != nil {
		return fmt.Errorf("%s: %w", c.network, err)
	}
	return nil
}

// checkChain compares a node's chain name with a configured chain.
func (c *Client) checkChain(node, chain string) error {
	for _, name := range nodeChains[chain] {
		if node == name {
			return nil
		}
	}
	return fmt.Errorf("%w: the node reports chain %q, and networks.%s.chain is %s", ErrWrongChain, node, c.network, chain)
}

// Health checks that the node answers, runs Config.Chain and is not in
// initial block download. A node warming up is ErrTransient; one still
// syncing is ErrNotReady.
func (c *Client) Health(ctx context.Context) error {
	var info blockchainInfo
	if err := c.rpc.call(ctx, "getblockchaininfo", &info); err != nil {
		return fmt.Errorf("%s: health: %w", c.network, err)
	}
	if err := c.checkChain(info.Chain, c.chain); err != nil {
		return fmt.Errorf("%s: health: %w", c.network, err)
	}
	if info.InitialBlockDownload {
		return fmt.Errorf("%s: health: %w: initial block download at %d of %d headers", c.network, ErrNotReady, info.Blocks, info.Headers)
	}
	return nil
}
