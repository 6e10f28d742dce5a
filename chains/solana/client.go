package solana

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/logs"
)

// Scanning modes (Config.Mode, Client.Mode).
const (
	// ModeBlock reads every finalized block and matches locally.
	ModeBlock = "block"
	// ModeAddress polls getSignaturesForAddress per watched address.
	ModeAddress = "address"
	// ModeAuto picks ModeAddress below Config.AddressModeMax watched keys and
	// ModeBlock otherwise.
	ModeAuto = "auto"
)

// DefaultAddressModeMax is the watched-set size from which ModeAuto scans
// blocks instead of polling addresses.
const DefaultAddressModeMax = 200

// MaxSlotRange is agave's MAX_GET_CONFIRMED_BLOCKS_RANGE: getBlocks refuses
// end-start above it. Slots splits larger ranges.
const MaxSlotRange = 500_000

// Config configures a Client.
type Config struct {
	// URL is the JSON-RPC endpoint (agave or a provider).
	URL string
	// Mode is ModeBlock, ModeAddress or ModeAuto ("" means ModeAuto).
	Mode string
	// AddressModeMax is ModeAuto's threshold (0 means DefaultAddressModeMax).
	AddressModeMax int
	// NotifyURL is the pubsub websocket for slotSubscribe; empty means URL
	// with ws/wss for http/https (a provider's layout; a bare agave node
	// serves pubsub on the RPC port + 1, which NotifyURL then names).
	NotifyURL string
	// HTTPClient sends the requests (nil: a client with a 60 s timeout).
	HTTPClient *http.Client
	// Log receives debug lines (nil: discarded).
	Log *slog.Logger
}

// Client is a watch-only Solana source reading finalized slots.
type Client struct {
	rpc       *rpc.Client
	notifyURL string
	mode      string
	addrMax   int
	log       *slog.Logger
}

var (
	_ chains.Source   = (*Client)(nil)
	_ chains.Notifier = (*Client)(nil)
)

// New returns a Client for cfg. It does not contact the node.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("solana: Config.URL is empty")
	}
	mode := cfg.Mode
	switch mode {
	case "":
		mode = ModeAuto
	case ModeAuto, ModeBlock, ModeAddress:
	default:
		return nil, fmt.Errorf("solana: Config.Mode %q is not block, address or auto", cfg.Mode)
	}
	if cfg.AddressModeMax < 0 {
		return nil, fmt.Errorf("solana: Config.AddressModeMax %d is negative", cfg.AddressModeMax)
	}
	addrMax := cfg.AddressModeMax
	if addrMax == 0 {
		addrMax = DefaultAddressModeMax
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	log := cfg.Log
	log = logs.Or(log)
	transport := jsonrpc.NewClientWithOpts(cfg.URL, &jsonrpc.RPCClientOpts{HTTPClient: hc})
	return &Client{rpc: rpc.NewWithCustomRPCClient(transport), notifyURL: chains.NotifyURL(cfg.NotifyURL, cfg.URL), mode: mode, addrMax: addrMax, log: log}, nil
}

// Mode returns the mode that applies to a watched set of the given size:
// ModeBlock or ModeAddress (ModeAuto resolved).
func (c *Client) Mode(watched int) string {
	if c.mode != ModeAuto {
		return c.mode
	}
	if watched < c.addrMax {
		return ModeAddress
	}
	return ModeBlock
}

// Tip returns the highest finalized slot: paywatch never reads below
// finalized, so the finalized slot is its tip.
func (c *Client) Tip(ctx context.Context) (chains.Height, error) {
	ctx = endpoints.Pin(ctx, 0)
	slot, err := c.finalizedSlot(ctx)
	if err == nil {
		endpoints.ObserveHead(ctx, int64(slot))
	}
	return chains.Height(slot), err
}

// FinalizedHeight returns the highest finalized slot (getSlot finalized).
func (c *Client) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	slot, err := c.finalizedSlot(ctx)
	return chains.Height(slot), err
}

func (c *Client) finalizedSlot(ctx context.Context) (uint64, error) {
	var slot uint64
	params := []any{rpc.M{"commitment": rpc.CommitmentFinalized}}
	err := c.call(ctx, "getSlot", params, func(body []byte) error {
		found, err := decodeEnvelope("getSlot", body, &slot, func(err error) error {
			return fmt.Errorf("solana: getSlot: %w: %w", chains.ErrInvalidResponse, err)
		})
		if err == nil && !found {
			return fmt.Errorf("solana: getSlot: %w: null slot", chains.ErrInvalidResponse)
		}
		return err
	})
	if err != nil {
		return 0, classify(err, "getSlot", 0)
	}
	return slot, nil
}

// blockParams is the getBlock configuration: finalized, v0 transactions
// allowed, no rewards, transactionDetails "accounts" (signatures, annotated
// account list including lookup-table keys, and a meta reduced to fee, err,
// status and balances). In accounts mode agave ignores the encoding after
// validating it; "json" is sent.
func blockParams(slot uint64) []any {
	return []any{slot, rpc.M{
		"commitment":                     rpc.CommitmentFinalized,
		"encoding":                       "json",
		"maxSupportedTransactionVersion": rpc.MaxSupportedTransactionVersion0,
		"rewards":                        false,
		"transactionDetails":             rpc.TransactionDetailsAccounts,
	}}
}

// Block returns the finalized block at slot with the lamports credited to
// watched keys. A skipped slot is chains.ErrSkipped, a slot above the
// finalized tip chains.ErrBlockNotFound.
func (c *Client) Block(ctx context.Context, height chains.Height, w chains.Watched) (chains.Block, error) {
	// Behind a pool of endpoints, the block and a skip's confirmation come
	// from one that showed the slot finalized.
	ctx = endpoints.Pin(ctx, int64(height))
	for {
		b, err := c.block(ctx, height, w)
		if !errors.Is(err, chains.ErrSkipped) && endpoints.Again(ctx, err, "block not available at a slot it showed finalized") {
			continue
		}
		return b, err
	}
}

// block is Block's reads, pinned to one endpoint.
func (c *Client) block(ctx context.Context, height chains.Height, w chains.Watched) (chains.Block, error) {
	slot := uint64(height)
	var b chains.Block
	err := c.call(ctx, "getBlock", blockParams(slot), func(body []byte) error {
		var err error
		b, err = decodeBlock(slot, body, w)
		return err
	})
	if err == nil {
		c.log.Debug("solana block", "slot", slot, "hash", b.Hash, "transfers", len(b.Transfers))
		b.Endpoint = endpoints.OnlyServer(ctx)
		return b, nil
	}
	err = c.confirmSkip(ctx, slot, classify(err, "getBlock", slot))
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) && rpcErr.Code == codeBlockNotAvailable {
		// -32004 means both "above the finalized root" and "not yet
		// readable"; the finalized slot tells which.
		fin, ferr := c.finalizedSlot(ctx)
		if ferr == nil && slot > fin {
			return chains.Block{}, fmt.Errorf("solana: getBlock %d above finalized slot %d: %w", slot, fin, chains.ErrBlockNotFound)
		}
	}
	return chains.Block{}, err
}

// confirmSkip checks a skip answer (-32007 "skipped, or missing due to
// ledger jump", -32009 "missing in long-term storage") against getBlocks
// over the slot: only a slot getBlocks leaves out is chains.ErrSkipped. A
// slot it lists was produced and this node cannot serve it (a ledger jump,
// a gap in its storage): ErrFaultySkip, retried and reported, never
// skipped. Any other err is returned as it is.
func (c *Client) confirmSkip(ctx context.Context, slot uint64, err error) error {
	if !errors.Is(err, chains.ErrSkipped) {
		return err
	}
	slots, serr := c.Slots(ctx, slot, slot)
	if serr != nil {
		return fmt.Errorf("solana: confirming skipped slot %d: %w", slot, serr)
	}
	if len(slots) == 0 {
		return err
	}
	var rpcErr *RPCError
	errors.As(err, &rpcErr)
	return fmt.Errorf("solana: getBlock %d: %w: getBlocks lists the slot: %w", slot, ErrFaultySkip, rpcErr)
}

// classify wraps a node error in the sentinel the scanner acts on.
func classify(err error, method string, slot uint64) error {
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) {
		return err
	}
	where := method
	if method == "getBlock" {
		where = fmt.Sprintf("getBlock %d", slot)
	}
	switch rpcErr.Code {
	case codeSlotSkipped, codeLongTermSlotSkipped:
		return fmt.Errorf("solana: %s: %w: %w", where, chains.ErrSkipped, err)
	case codeBlockNotAvailable, codeBlockStatusNotAvailable, codeLongTermStorageUnreached, codeMinContextSlotNotReached:
		return fmt.Errorf("solana: %s: %w: %w", where, ErrTransient, err)
	case codeUnsupportedTxVersion:
		return fmt.Errorf("solana: %s: %w: %w", where, ErrUnsupportedVersion, err)
	case codeBlockCleanedUp:
		return fmt.Errorf("solana: %s: %w: %w", where, ErrCleanedUp, err)
	}
	return fmt.Errorf("solana: %s: %w", where, err)
}

// Slots returns the slots in [from, to] that hold a finalized block, in
// ascending order (getBlocks; skipped slots are absent). Ranges wider than
// MaxSlotRange are fetched in several calls. to is capped by the node at
// its finalized slot.
func (c *Client) Slots(ctx context.Context, from, to uint64) ([]uint64, error) {
	if to < from {
		return nil, nil
	}
	var all []uint64
	for start := from; ; {
		end := to
		if end-start > MaxSlotRange {
			end = start + MaxSlotRange
		}
		var got []uint64
		params := []any{start, end, rpc.M{"commitment": rpc.CommitmentFinalized}}
		err := c.call(ctx, "getBlocks", params, func(body []byte) error {
			found, err := decodeEnvelope("getBlocks", body, &got, func(err error) error {
				return fmt.Errorf("solana: getBlocks %d-%d: %w: %w", start, end, chains.ErrInvalidResponse, err)
			})
			if err == nil && !found {
				return fmt.Errorf("solana: getBlocks %d-%d: %w: null result", start, end, chains.ErrInvalidResponse)
			}
			return err
		})
		if err != nil {
			return nil, classify(err, "getBlocks", 0)
		}
		prev := start
		for i, s := range got {
			if s < start || s > end || (i > 0 && s <= prev) {
				return nil, fmt.Errorf("solana: getBlocks %d-%d: %w: slot %d out of range or order", start, end, chains.ErrInvalidResponse, s)
			}
			prev = s
		}
		all = append(all, got...)
		if end == to {
			return all, nil
		}
		start = end + 1
	}
}
