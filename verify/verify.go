package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Decider decides intents again after a verification (intents.Service).
type Decider interface {
	RedecideAll(ctx context.Context, tx *store.Tx, ids []string, now time.Time) error
}

// Endpoints is what the verifier needs of a network's endpoint pool
// (*endpoints.Pool): who may verify a block, and where to count what they
// found.
type Endpoints interface {
	Verifiers(scannedBy string) []string
	CountVerification(name string, agrees bool)
}

var _ Endpoints = (*endpoints.Pool)(nil)

// Network is one network the verifier checks.
type Network struct {
	// Source reads blocks and heads; with Pool, through it (the reads
	// pinned with endpoints.Verify).
	Source chains.Source
	// Pool is the network's endpoint pool (nil: one rpc_url, nothing can
	// verify: large intents are held as no_verifier).
	Pool Endpoints
	// MinCents is large_amount_usd: intents of at least this are checked.
	MinCents int64
}

// Config wires a Verifier.
type Config struct {
	Networks map[payment.Network]Network
	// Poll is how often each network's unverified transfers are checked
	// (default 2 s).
	Poll time.Duration
	// Leads says whether this instance leads network n's scanner (nil:
	// it does): only the leader checks.
	Leads func(n payment.Network) bool
	Clock clock.Clock
	Log   *slog.Logger
}

// Verifier checks large payments against a second source.
type Verifier struct {
	st  *store.Store
	dec Decider
	cfg Config
	clk clock.Clock
	log *slog.Logger

	mu            sync.Mutex
	disagreements map[payment.Network]int64
	checks        map[payment.Network]map[string]int64 // state → checks
}

// New returns a verifier over the networks of cfg.
func New(st *store.Store, dec Decider, cfg Config) *Verifier {
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	return &Verifier{st: st, dec: dec, cfg: cfg, clk: clock.Or(cfg.Clock), log: logs.Or(cfg.Log).With("component", "verify"),
		disagreements: map[payment.Network]int64{}, checks: map[payment.Network]map[string]int64{}}
}

// Networks returns the networks checked, in payment.Networks order.
func (v *Verifier) Networks() []payment.Network {
	var out []payment.Network
	for _, n := range payment.Networks {
		if _, ok := v.cfg.Networks[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// Run checks every network each Poll until ctx ends; it returns nil then.
func (v *Verifier) Run(ctx context.Context) error {
	for {
		for _, n := range v.Networks() {
			if v.cfg.Leads != nil && !v.cfg.Leads(n) {
				continue
			}
			if _, err := v.Once(ctx, n); err != nil && ctx.Err() == nil {
				v.log.WarnContext(ctx, "verifying large payments failed", "network", n, "err", err)
			}
		}
		t := v.clk.NewTimer(v.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// batch is how many transfers one pass checks per network.
const batch = 100

// Once checks network n's unverified transfers of large intents once and
// returns how many it verified.
func (v *Verifier) Once(ctx context.Context, n payment.Network) (int, error) {
	nw, ok := v.cfg.Networks[n]
	if !ok {
		return 0, fmt.Errorf("verify: %s is not verified", n)
	}
	trs, err := v.st.ToVerify(ctx, string(n), nw.MinCents, batch)
	if err != nil {
		return 0, err
	}
	verified := 0
	for _, t := range trs {
		res := v.Check(ctx, n, t)
		if ctx.Err() != nil {
			return verified, nil
		}
		ok, err := v.record(ctx, n, t, res)
		if err != nil {
			return verified, err
		}
		if ok && res.State == store.VerifyVerified {
			verified++
		}
	}
	return verified, nil
}

// record writes what the check found and, when verified, decides the
// transfer's intent again (in the same transaction: paid if the rest
// holds).
func (v *Verifier) record(ctx context.Context, n payment.Network, t store.Transfer, res store.Verification) (bool, error) {
	var wrote, changed bool
	err := v.st.InTx(ctx, func(tx *store.Tx) error {
		now := v.clk.Now().UTC()
		var err error
		wrote, changed, err = tx.SetVerification(ctx, t.ID, t.BlockHash, t.Amount.String(), res, now)
		if err != nil || !wrote || res.State != store.VerifyVerified {
			return err
		}
		return v.dec.RedecideAll(ctx, tx, []string{t.IntentID}, now)
	})
	if err != nil {
		return false, fmt.Errorf("verify transfer %s: %w", t.ID, err)
	}
	if !wrote {
		return false, nil
	}
	v.mu.Lock()
	if v.checks[n] == nil {
		v.checks[n] = map[string]int64{}
	}
	v.checks[n][res.State]++
	disagrees := res.State == store.VerifyDisagrees || res.State == store.VerifyUnseen
	if changed && disagrees {
		v.disagreements[n]++
	}
	v.mu.Unlock()
	if p := v.cfg.Networks[n].Pool; p != nil && changed && res.Endpoint != "" && (disagrees || res.State == store.VerifyVerified) {
		p.CountVerification(res.Endpoint, !disagrees)
	}
	if changed {
		attrs := []any{"network", n, "transfer", t.ID, "intent", t.IntentID, "txid", t.TxID, "scanned_by", t.ScannedBy,
			"verifier", res.Endpoint, "state", res.State, "detail", res.Detail}
		switch res.State {
		case store.VerifyVerified:
			v.log.InfoContext(ctx, "large payment verified by a second source", attrs...)
		case store.VerifyDisagrees, store.VerifyUnseen:
			v.log.WarnContext(ctx, "second source disagrees: large payment held", attrs...)
		case store.VerifyNoVerifier:
			v.log.WarnContext(ctx, "no second source for a large payment: held", attrs...)
		}
	}
	return true, nil
}

// Disagreements returns the disagreements (and unseen transfers) this
// process found on network n.
func (v *Verifier) Disagreements(n payment.Network) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.disagreements[n]
}

// Check reads transfer t again from an endpoint of another provider than
// the one that served its block, and says what it found (it writes
// nothing).
func (v *Verifier) Check(ctx context.Context, n payment.Network, t store.Transfer) store.Verification {
	nw := v.cfg.Networks[n]
	now := v.clk.Now().UTC()
	out := store.Verification{CheckedAt: &now}
	if nw.Pool == nil || len(nw.Pool.Verifiers(t.ScannedBy)) == 0 {
		out.State, out.Detail = store.VerifyNoVerifier, "no endpoint of another provider is configured"
		if t.ScannedBy == "" && nw.Pool != nil {
			out.Detail = "the endpoint that served the block is not known and no endpoint of role verify is configured"
		}
		return out
	}
	if t.BlockHeight == nil {
		out.State, out.Detail = store.VerifyPending, "not in a block"
		return out
	}
	height := chains.Height(*t.BlockHeight)
	vctx := endpoints.Verify(ctx, t.ScannedBy, int64(height))
	b, err := nw.Source.Block(vctx, height, oneKey(t.AddressKey))
	out.Endpoint = endpoints.ServedBy(vctx)
	switch {
	case errors.Is(err, chains.ErrSkipped):
		out.State, out.Detail = store.VerifyUnseen, fmt.Sprintf("the verifier has no block at height %d", height)
		return out
	case err != nil:
		out.State, out.Detail = store.VerifyPending, "the verifier cannot serve the block yet: "+chains.RedactError(err).Error()
		return out
	}
	if b.Hash != t.BlockHash {
		out.State, out.Detail = store.VerifyUnseen, fmt.Sprintf("the verifier's best chain has block %s at height %d, the scan saw %s", b.Hash, height, t.BlockHash)
		return out
	}
	var seen *chains.Transfer
	for i := range b.Transfers {
		if x := &b.Transfers[i]; x.TxID == t.TxID && x.Index == t.Index {
			seen = x
		}
	}
	switch {
	case seen == nil:
		out.State, out.Detail = store.VerifyUnseen, fmt.Sprintf("the verifier's block %s has no transfer %s:%d to %s", b.Hash, t.TxID, t.Index, t.Address)
		return out
	case string(seen.Asset) != t.Asset || seen.Amount.Cmp(t.Amount) != 0:
		out.State, out.Detail = store.VerifyDisagrees, fmt.Sprintf("the verifier shows %s %s, the scan %s %s", seen.Amount, seen.Asset, t.Amount, t.Asset)
		return out
	}
	if err := depth(vctx, nw.Source, height, t.ConfirmationsRequired); err != nil {
		out.State, out.Detail = store.VerifyPending, err.Error()
		return out
	}
	out.State, out.Detail = store.VerifyVerified, ""
	return out
}

// depth checks that the verifier's own head (or finalized height, for a
// transfer counted at finality) gives the block its confirmations.
func depth(ctx context.Context, src chains.Source, height chains.Height, required int) error {
	if required <= 0 {
		fin, err := src.FinalizedHeight(ctx)
		if err != nil {
			return fmt.Errorf("the verifier's finalized height: %w", chains.RedactError(err))
		}
		if fin < height {
			return fmt.Errorf("the verifier has finalized height %d, below the block's %d", fin, height)
		}
		return nil
	}
	tip, err := src.Tip(ctx)
	if err != nil {
		return fmt.Errorf("the verifier's head: %w", chains.RedactError(err))
	}
	if got := int64(tip-height) + 1; got < int64(required) {
		return fmt.Errorf("the verifier shows %d of %d confirmations", max(got, 0), required)
	}
	return nil
}

// oneKey is a watched set of one key: the transfer's destination.
type oneKey []byte

func (k oneKey) Contains(key []byte) bool { return bytes.Equal(key, k) }
