package availability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// NetworkStatus is one network in GET /v1/status.
type NetworkStatus struct {
	Network          string     `json:"network"`
	Enabled          bool       `json:"enabled"`
	NodeHeight       int64      `json:"node_height"`
	ScannedHeight    int64      `json:"scanned_height"`
	FinalHeight      int64      `json:"final_height"`
	LagBlocks        int64      `json:"lag_blocks"`
	LagSeconds       int64      `json:"lag_seconds"`
	LastBlockAt      *time.Time `json:"last_block_at"`
	Healthy          bool       `json:"healthy"`
	LastError        string     `json:"last_error"`
	Critical         string     `json:"critical,omitempty"`
	Leader           string     `json:"leader"`
	UpdatedAt        *time.Time `json:"updated_at"`
	AddressesWatched int64      `json:"addresses_watched"`
	PoolRemaining    *int64     `json:"pool_remaining,omitempty"`
	DerivationNext   *int64     `json:"derivation_next_index,omitempty"`
	Mode             string     `json:"mode,omitempty"`
	// Endpoints are the network's node endpoints when its config lists
	// them (names and states, never URLs), as this instance sees them.
	Endpoints []endpoints.Status `json:"endpoints,omitempty"`
	// Available is "" when new intents are accepted, else why not.
	Available string `json:"unavailable_reason,omitempty"`
	// Verification is the second source for large payments, when the
	// network sets large_amount_usd (issue 33 item 5).
	Verification *VerificationStatus `json:"verification,omitempty"`
}

// VerificationStatus is a network's second source for large payments in
// GET /v1/status.
type VerificationStatus struct {
	// LargeAmountUSD is networks.<n>.large_amount_usd.
	LargeAmountUSD string `json:"large_amount_usd"`
	// Verifiers are the endpoints of role verify (an endpoint of role
	// both verifies the blocks another one served).
	Verifiers []string `json:"verifiers,omitempty"`
	// Held is how many intents a second source holds now: a confirmed
	// payment not verified, never paid while so.
	Held int64 `json:"held"`
	// HeldIntents are the oldest of them (at most 20) with their state.
	HeldIntents []HeldIntent `json:"held_intents"`
	// Disagreements are those the answering instance found since it
	// started (another amount or asset, or the transfer not shown).
	Disagreements int64 `json:"disagreements"`
}

// HeldIntent is an intent a second source holds.
type HeldIntent struct {
	IntentID string `json:"intent_id"`
	// State is pending (the verifier cannot say yet), unseen, disagrees,
	// no_verifier, or "" before the first check.
	State string `json:"state"`
}

// Networks reports scanner health from the cursors, and decides whether new
// intents may be accepted (ChainStatus).
type Networks struct {
	Store  *store.Store
	Config *config.Config
	// Modes reports a per-network mode string (Ethereum trace mode, Solana
	// scan mode) when known.
	Modes func(network payment.Network) string
	// Endpoints reports a network's endpoint pool (nil, or nil for a
	// network of one rpc_url: no pool). New intents are refused when a
	// pool has no endpoint that can serve within max_lag_blocks.
	Endpoints func(network payment.Network) []endpoints.Status
	// Verification adds what this instance knows of a network's second
	// source (its verifiers, the disagreements it found) to the status a
	// network setting large_amount_usd has (nil: nothing to add).
	Verification func(network payment.Network, st *VerificationStatus)
	// Sources gives the derivation source of each derived network.
	Sources map[payment.Network]string
	// Clock is the clock of availability answers; nil is the wall clock.
	Clock clock.Clock
	// CacheFor reuses an Available answer this long (by Clock; 0: never),
	// so intent creation does not read the cursor on every request.
	CacheFor time.Duration

	mu    sync.Mutex
	cache map[payment.Network]availability
}

// availability is a recent answer of Available, kept briefly so intent
// creation does not read the cursor on every request.
type availability struct {
	err error
	at  time.Time
}

var _ intents.ChainStatus = (*Networks)(nil)

// staleAfter is how long a cursor may go without an update before its
// scanner (or its leader instance) is considered gone.
func (n *Networks) staleAfter(nc *config.Network) time.Duration {
	return 3*nc.PollInterval.Duration + 60*time.Second
}

// Available returns nil when new intents on network can be accepted: its
// scanner runs, is healthy, recently updated and within max_lag_blocks.
func (n *Networks) Available(ctx context.Context, network payment.Network) error {
	if n.CacheFor <= 0 {
		return n.available(ctx, network)
	}
	now := n.now()
	n.mu.Lock()
	if a, ok := n.cache[network]; ok && now.Sub(a.at) >= 0 && now.Sub(a.at) < n.CacheFor {
		n.mu.Unlock()
		return a.err
	}
	n.mu.Unlock()
	err := n.available(ctx, network)
	if ctx.Err() == nil {
		n.mu.Lock()
		if n.cache == nil {
			n.cache = map[payment.Network]availability{}
		}
		n.cache[network] = availability{err: err, at: now}
		n.mu.Unlock()
	}
	return err
}

func (n *Networks) available(ctx context.Context, network payment.Network) error {
	nc := n.Config.Networks[network]
	if nc == nil || !nc.Enabled {
		return errors.New("the network is not enabled")
	}
	c, err := n.Store.GetCursor(ctx, string(network))
	if errors.Is(err, store.ErrNotFound) {
		h, err := n.Store.PreCursorHealth(ctx, string(network))
		return judgePreCursor(h, err)
	}
	if err != nil {
		return err
	}
	if err := n.judge(c, nc); err != nil {
		return err
	}
	return n.judgeEndpoints(network)
}

// judgeEndpoints refuses new intents when the network's pool has no
// endpoint that can serve within its lag bound: throttled is slowed, not
// down, so only down, lagging, spent or wrong-chain endpoints count.
func (n *Networks) judgeEndpoints(network payment.Network) error {
	if n.Endpoints == nil {
		return nil
	}
	eps := n.Endpoints(network)
	if len(eps) == 0 {
		return nil
	}
	var why []string
	for _, e := range eps {
		if !e.Scans {
			continue
		}
		if e.State == endpoints.Healthy || e.State == endpoints.Throttled {
			return nil
		}
		why = append(why, e.Name+" "+string(e.State))
	}
	return fmt.Errorf("no node endpoint can serve within max_lag_blocks (%s)", strings.Join(why, ", "))
}

// judgePreCursor judges a network whose scanner has placed no cursor by
// what it reported before (store.PreCursorHealth: a node on another chain,
// a node failing from the start), else as not started.
func judgePreCursor(h store.Cursor, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNotStarted
	case err != nil:
		return err
	case h.Critical != "":
		return fmt.Errorf("critical: %s", chains.RedactText(h.Critical))
	case !h.Healthy:
		return fmt.Errorf("its node is failing: %s", chains.RedactText(h.LastError))
	}
	return errNotStarted
}

// errNotStarted is a network whose scanner has reported nothing yet.
var errNotStarted = errors.New("its scanner has not started yet")

func (n *Networks) now() time.Time {
	return clock.Or(n.Clock).Now()
}

func (n *Networks) judge(c store.Cursor, nc *config.Network) error {
	switch {
	case c.Critical != "":
		return fmt.Errorf("critical: %s", chains.RedactText(c.Critical))
	case !c.Healthy:
		return fmt.Errorf("its node is failing: %s", chains.RedactText(c.LastError))
	case n.now().Sub(c.UpdatedAt) > n.staleAfter(nc):
		return fmt.Errorf("its scanner has not reported for %s", n.now().Sub(c.UpdatedAt).Round(time.Second))
	case c.NodeHeight-c.Height > nc.MaxLagBlocks:
		return fmt.Errorf("the scanner is %d blocks behind the node (at most %d)", c.NodeHeight-c.Height, nc.MaxLagBlocks)
	}
	return nil
}

// Networks returns the status of every network. Its figures come from one
// round trip (store.StatusFigures) whatever the number of networks; only an
// enabled network without a cursor yet reads its scanner's health beside.
func (n *Networks) Networks(ctx context.Context) ([]NetworkStatus, error) {
	fig, err := n.Store.StatusFigures(ctx, []string{string(payment.Solana)})
	if err != nil {
		return nil, err
	}
	var out []NetworkStatus
	for _, net := range payment.Networks {
		nc := n.Config.Networks[net]
		st := NetworkStatus{Network: string(net), Enabled: nc != nil && nc.Enabled}
		c, ok := fig.Cursors[string(net)]
		switch {
		case !ok:
			st.Available = "the network is not enabled"
			if !st.Enabled {
				break
			}
			h, herr := n.Store.PreCursorHealth(ctx, string(net))
			if herr != nil && !errors.Is(herr, store.ErrNotFound) {
				return nil, herr
			}
			if herr == nil {
				st.LastError, st.Critical, st.Leader = chains.RedactText(h.LastError), chains.RedactText(h.Critical), h.Leader
				u := h.UpdatedAt
				st.UpdatedAt = &u
			}
			st.Available = judgePreCursor(h, herr).Error()
		default:
			st.NodeHeight, st.ScannedHeight, st.FinalHeight = c.NodeHeight, c.Height, c.FinalHeight
			st.LagBlocks = max(0, c.NodeHeight-c.Height)
			st.LastBlockAt = c.LastBlockAt
			if c.LastBlockAt != nil && !c.LastBlockAt.IsZero() {
				st.LagSeconds = max(0, int64(n.now().Sub(*c.LastBlockAt).Seconds()))
			}
			st.Healthy, st.LastError, st.Critical, st.Leader = c.Healthy && c.Critical == "", chains.RedactText(c.LastError), chains.RedactText(c.Critical), c.Leader
			u := c.UpdatedAt
			st.UpdatedAt = &u
			if !st.Enabled {
				st.Available = "the network is not enabled"
			} else if err := n.judge(c, nc); err != nil {
				st.Available = err.Error()
				st.Healthy = false
			} else if err := n.judgeEndpoints(net); err != nil {
				st.Available = err.Error()
				st.Healthy = false
			}
		}
		st.AddressesWatched = fig.Watched[string(net)]
		if net == payment.Solana {
			rem := fig.PoolRemaining[string(net)]
			st.PoolRemaining = &rem
		} else if src, ok := n.Sources[net]; ok {
			next := fig.Next[[2]string{string(net), src}]
			st.DerivationNext = &next
		}
		if n.Modes != nil {
			st.Mode = n.Modes(net)
		}
		if n.Endpoints != nil {
			st.Endpoints = n.Endpoints(net)
		}
		if st.Enabled && nc != nil {
			if st.Verification, err = n.verification(ctx, net, nc); err != nil {
				return nil, err
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// heldShown bounds the held intents a status lists (their count is whole
// up to heldCounted).
const heldShown, heldCounted = 20, 1000

// verification is network's second source for large payments, when it
// sets large_amount_usd (nil otherwise): the intents it holds, read from
// the store, and what the Verification hook adds.
func (n *Networks) verification(ctx context.Context, net payment.Network, nc *config.Network) (*VerificationStatus, error) {
	large, ok := nc.LargeAmount()
	if !ok {
		return nil, nil
	}
	held, err := n.Store.HeldByVerification(ctx, string(net), int64(large), heldCounted)
	if err != nil {
		return nil, err
	}
	st := &VerificationStatus{LargeAmountUSD: large.String(), Held: int64(len(held)), HeldIntents: []HeldIntent{}}
	for i, h := range held {
		if i == heldShown {
			break
		}
		st.HeldIntents = append(st.HeldIntents, HeldIntent{IntentID: h.IntentID, State: h.State})
	}
	if n.Verification != nil {
		n.Verification(net, st)
	}
	return st, nil
}
