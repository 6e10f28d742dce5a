package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Config bounds the reconciler's work and cost.
type Config struct {
	// Schedule is when a run starts (nil: hourly), config's
	// reconcile.schedule as parsed at load.
	Schedule cron.Schedule
	// Blocks is the fewest blocks below the cursor a run checks (default
	// 100): the recent range is checked again on every run.
	Blocks int64
	// MaxBlocks caps a run (default 2000): the blocks scanned since the
	// last run are checked, at most this many, the newest first.
	MaxBlocks int64
	// Sample is how many addresses a per-address view (Solana) lists per
	// run, on top of those that received something in the range (default
	// 50).
	Sample int
	// RatePerSecond is each network's own call budget (default 10).
	RatePerSecond float64
	// Clock times the schedule and the polls; nil is the wall clock.
	Clock clock.Clock
	// Poll is how often on-demand requests and pending re-checks are
	// looked for (default 5 s).
	Poll time.Duration
	// Leads, when set, says whether this instance leads network n's
	// scanner. Run checks only the networks it leads: a BlockView's watched
	// set is filled by the scanner's leader alone, and a standby's empty
	// set would report real transfers as unexpected. A request is left for
	// the leader to take.
	Leads func(n payment.Network) bool
}

// hourly is the default schedule: at minute 0 of every hour.
var hourly = func() cron.Schedule {
	s, err := cron.ParseStandard("@hourly")
	if err != nil {
		panic(err)
	}
	return s
}()

func (c Config) withDefaults() Config {
	if c.Schedule == nil {
		c.Schedule = hourly
	}
	if c.Blocks <= 0 {
		c.Blocks = 100
	}
	if c.MaxBlocks < c.Blocks {
		c.MaxBlocks = max(2000, c.Blocks)
	}
	if c.Sample <= 0 {
		c.Sample = 50
	}
	if c.RatePerSecond == 0 {
		c.RatePerSecond = 10
	}
	if c.Poll <= 0 {
		c.Poll = 5 * time.Second
	}
	return c
}

// Reconciler runs the checks of every network it has a view of.
type Reconciler struct {
	store *store.Store
	cfg   Config
	views map[payment.Network]View
	log   *slog.Logger
	clock clock.Clock
	now   func() time.Time
	mu    sync.Mutex // one run at a time per process
}

// New returns a reconciler over views (one per network). A view's budget
// is set from cfg.RatePerSecond.
func New(st *store.Store, cfg Config, views map[payment.Network]View, log *slog.Logger) (*Reconciler, error) {
	cfg = cfg.withDefaults()
	log = logs.Or(log)
	for _, v := range views {
		switch v := v.(type) {
		case *BlockView:
			v.budget = newBudget(cfg.RatePerSecond)
		case *SignatureView:
			v.budget = newBudget(cfg.RatePerSecond)
		}
	}
	clk := clock.Or(cfg.Clock)
	return &Reconciler{store: st, cfg: cfg, views: views, log: log.With("component", "reconcile"), clock: clk,
		now: func() time.Time { return clk.Now().UTC() }}, nil
}

// Networks returns the networks the reconciler checks, in order.
func (r *Reconciler) Networks() []payment.Network {
	var out []payment.Network
	for _, n := range payment.Networks {
		if r.views[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// Report is what one run of one network did.
type Report struct {
	Network   payment.Network
	From, To  int64
	Blocks    int64
	Addresses int64
	Calls     int64
	// Findings are the differences found by this run (new or seen again).
	Findings []store.Finding
	// Rechecked are findings a rescan had been asked for and that were
	// checked again at the start of the run.
	Rechecked []store.Finding
	// Skipped says why nothing was checked ("" when a range was).
	Skipped string
}

// Run checks every network on the schedule, and on demand (a request in
// the store) and re-checks findings whose rescan is done, until ctx ends.
func (r *Reconciler) Run(ctx context.Context) error {
	next := r.cfg.Schedule.Next(r.now())
	for {
		wait := r.clock.NewTimer(r.cfg.Poll)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil
		case <-wait.C:
		}
		due := !r.now().Before(next)
		if due {
			next = r.cfg.Schedule.Next(r.now())
		}
		for _, n := range r.Networks() {
			if r.cfg.Leads != nil && !r.cfg.Leads(n) {
				continue // the leader's view is whole; this one's is not
			}
			asked, err := r.store.TakeReconcileRequest(ctx, string(n))
			if err != nil {
				r.log.WarnContext(ctx, "reading reconcile requests failed", "network", n, "err", err)
				continue
			}
			if due || asked {
				if _, err := r.RunOnce(ctx, n); err != nil && ctx.Err() == nil {
					r.log.WarnContext(ctx, "reconcile run failed", "network", n, "err", err)
				}
				continue
			}
			if _, err := r.Recheck(ctx, n); err != nil && ctx.Err() == nil {
				r.log.WarnContext(ctx, "reconcile re-check failed", "network", n, "err", err)
			}
		}
	}
}

// RunOnce re-checks network's findings whose rescan is done, then checks
// the next range: the blocks scanned since the last run (at most
// MaxBlocks, the newest) and at least the last Blocks below the cursor.
func (r *Reconciler) RunOnce(ctx context.Context, n payment.Network) (Report, error) {
	return r.run(ctx, n, -1, -1)
}

// RunRange re-checks network's findings whose rescan is done, then checks
// blocks [from, to] (to is capped at the cursor).
func (r *Reconciler) RunRange(ctx context.Context, n payment.Network, from, to int64) (Report, error) {
	if from < 0 || to < from {
		return Report{}, fmt.Errorf("reconcile %s: range [%d, %d]: want 0 <= from <= to", n, from, to)
	}
	return r.run(ctx, n, from, to)
}

func (r *Reconciler) run(ctx context.Context, n payment.Network, from, to int64) (Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := Report{Network: n}
	v := r.views[n]
	if v == nil {
		return rep, fmt.Errorf("reconcile: no view of %s (network not enabled)", n)
	}
	rechecked, err := r.recheck(ctx, n)
	rep.Rechecked = rechecked
	if err != nil {
		return rep, err
	}
	cur, err := r.store.GetCursor(ctx, string(n))
	if errors.Is(err, store.ErrNotFound) {
		rep.Skipped = "not scanned yet"
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	if cur.RescanFrom != nil {
		rep.Skipped = fmt.Sprintf("a rescan from %d is pending", *cur.RescanFrom)
		return rep, nil
	}
	if from < 0 {
		to = cur.Height
		from = max(0, to-r.cfg.Blocks+1)
		prev, err := r.store.ReconcileRunOf(ctx, string(n))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return rep, err
		}
		if err == nil && prev.CheckedTo != nil && *prev.CheckedTo+1 < from {
			from = max(*prev.CheckedTo+1, to-r.cfg.MaxBlocks+1, 0)
		}
	}
	to = min(to, cur.Height)
	// Only what the scanner scanned: above the block it started on (the
	// lowest block ref kept). Below, nothing was ever recorded, and a
	// difference there says nothing about paywatch.
	low, err := r.store.LowestBlock(ctx, string(n))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rep, err
	}
	if err == nil {
		from = max(from, low+1)
	}
	if to < from {
		rep.Skipped = fmt.Sprintf("range [%d, %d] is above the scanned height %d", from, to, cur.Height)
		return rep, nil
	}
	rep.From, rep.To, rep.Blocks = from, to, to-from+1
	now := r.now()
	if err := r.store.StartReconcileRun(ctx, string(n), from, to, now); err != nil {
		return rep, err
	}
	var keys [][]byte
	if v.PerAddress() {
		if keys, err = r.store.SampleAddressKeys(ctx, string(n), from, to, r.cfg.Sample); err != nil {
			return rep, err
		}
		if keys == nil {
			keys = [][]byte{} // none: nil would mean every key to the store
		}
		rep.Addresses = int64(len(keys))
	}
	calls := v.Calls()
	credits, verr := v.Credits(ctx, chains.Height(from), chains.Height(to), keys)
	if errors.Is(verr, ErrInconsistent) {
		// A reorg between two block reads is ordinary near the tip: read
		// the range once more before calling the node inconsistent.
		r.log.InfoContext(ctx, "reconcile: the node changed chains during the check; reading the range again", "network", n, "err", verr)
		credits, verr = v.Credits(ctx, chains.Height(from), chains.Height(to), keys)
	}
	rep.Calls = v.Calls() - calls
	run := store.ReconcileRun{Network: string(n), LastBlocks: rep.Blocks, LastAddresses: rep.Addresses, LastCalls: rep.Calls}
	if verr != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		// Never a silent skip: the range stays unchecked and the operator
		// sees why.
		f, _, err := r.store.RecordFinding(ctx, store.Finding{Network: string(n), Kind: store.FindingNodeError, Status: store.FindingOpen,
			RangeFrom: from, RangeTo: to, NodeAnswer: redact(verr.Error()), Ours: "range not checked"}, r.now())
		if err != nil {
			return rep, err
		}
		rep.Findings = append(rep.Findings, f)
		run.LastFindings, run.LastError = 1, redact(verr.Error())
		r.log.WarnContext(ctx, "reconcile: the node could not be checked", "network", n, "from", from, "to", to, "err", run.LastError)
		return rep, r.store.FinishReconcileRun(ctx, run, r.now())
	}
	ours, err := r.store.TransfersInBlocks(ctx, string(n), from, to, keys)
	if err != nil {
		return rep, err
	}
	diffs := compare(credits, ours)
	lowest := int64(-1)
	for _, d := range diffs {
		d.Network, d.Status, d.RangeFrom, d.RangeTo = string(n), store.FindingRescanning, from, to
		f, isNew, err := r.store.RecordFinding(ctx, d, r.now())
		if err != nil {
			return rep, err
		}
		rep.Findings = append(rep.Findings, f)
		// A transfer the node shows and we lack (or hold otherwise) is what
		// a rescan records. One we hold that the node does not show is not:
		// the scanner orphans it itself if its block left the chain, and a
		// rescan could not add it; it is only checked again.
		if f.Status == store.FindingRescanning && f.Kind != store.FindingUnexpected && (lowest < 0 || *f.BlockHeight < lowest) {
			lowest = *f.BlockHeight
		}
		if isNew {
			r.log.WarnContext(ctx, "reconcile finding", "network", n, "kind", f.Kind, "txid", f.TxID, "index", f.Index,
				"height", *f.BlockHeight, "node", f.NodeAnswer, "ours", f.Ours)
		}
	}
	if lowest >= 0 {
		// The existing rescan, idempotent: the difference is checked again
		// once the scanner has passed it.
		if err := r.store.RequestRescan(ctx, string(n), lowest, r.now()); err != nil {
			return rep, fmt.Errorf("reconcile %s: request rescan from %d: %w", n, lowest, err)
		}
	}
	run.LastFindings = int64(len(rep.Findings))
	return rep, r.store.FinishReconcileRun(ctx, run, r.now())
}

// Recheck checks again network's findings whose rescan is done (the
// scanner has no rescan pending and has passed their height).
func (r *Reconciler) Recheck(ctx context.Context, n payment.Network) ([]store.Finding, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recheck(ctx, n)
}

func (r *Reconciler) recheck(ctx context.Context, n payment.Network) ([]store.Finding, error) {
	pending, err := r.store.Findings(ctx, string(n), store.FindingRescanning, 1000)
	if err != nil || len(pending) == 0 {
		return nil, err
	}
	cur, err := r.store.GetCursor(ctx, string(n))
	if err != nil {
		return nil, err
	}
	if cur.RescanFrom != nil {
		return nil, nil // the rescan has not started
	}
	v := r.views[n]
	var out []store.Finding
	for _, f := range pending {
		h := *f.BlockHeight
		if cur.Height < h {
			continue // not rescanned that far yet
		}
		var keys [][]byte
		if v.PerAddress() {
			keys = [][]byte{f.AddressKey}
		}
		credits, err := v.Credits(ctx, chains.Height(h), chains.Height(h), keys)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			f.Status, f.Resolution = store.FindingOpen, "re-check after the rescan failed: "+redact(err.Error())
		} else {
			ours, err := r.store.TransfersInBlocks(ctx, string(n), h, h, keys)
			if err != nil {
				return out, err
			}
			f.Status, f.Resolution = store.FindingResolved, "explained by the rescan: the node's view and ours agree now"
			for _, d := range compare(credits, ours) {
				if d.TxID == f.TxID && d.Index == f.Index {
					f.Status = store.FindingOpen
					f.Resolution = "the rescan did not explain it: node " + d.NodeAnswer + "; ours " + d.Ours
				}
			}
		}
		if err := r.store.SetFindingStatus(ctx, f.ID, f.Status, f.Resolution, r.now()); err != nil {
			return out, err
		}
		r.log.InfoContext(ctx, "reconcile finding re-checked", "network", n, "id", f.ID, "status", f.Status, "resolution", f.Resolution)
		out = append(out, f)
	}
	return out, nil
}

type natural struct {
	txid  string
	index int64
}

// adoptLegacy files each transfer stored under a pre-0025 block log index
// (store.LegacyIndexBase) under the tx-local key of the node's credit it is,
// as the scanner's next upsert of it will re-key it: the lowest free
// credit of its transaction, asset and address, in index order. One with
// no such credit stays under its own key (unexpected).
func adoptLegacy(mine map[natural]store.Transfer, legacy []store.Transfer, credits []Credit) {
	sort.Slice(legacy, func(i, j int) bool { return legacy[i].Index < legacy[j].Index })
	byIndex := append([]Credit(nil), credits...)
	sort.Slice(byIndex, func(i, j int) bool { return byIndex[i].Index < byIndex[j].Index })
	for _, t := range legacy {
		k := natural{t.TxID, t.Index}
		for _, c := range byIndex {
			if c.TxID == t.TxID && c.Asset == t.Asset && string(c.Key) == string(t.AddressKey) {
				if _, taken := mine[natural{c.TxID, c.Index}]; !taken {
					k = natural{c.TxID, c.Index}
					break
				}
			}
		}
		mine[k] = t
	}
}

// compare returns a finding (kind, transfer, height, both answers) per
// difference between the node's credits and our transfers. Balance-check
// items (ingest.BalanceTxID) are not transactions and are left out.
func compare(credits []Credit, ours []store.Transfer) []store.Finding {
	node := make(map[natural]Credit, len(credits))
	for _, c := range credits {
		node[natural{c.TxID, c.Index}] = c
	}
	mine := make(map[natural]store.Transfer, len(ours))
	var legacy []store.Transfer
	for _, t := range ours {
		if strings.HasPrefix(t.TxID, "balance:") {
			continue
		}
		if t.Index >= store.LegacyIndexBase {
			legacy = append(legacy, t)
			continue
		}
		mine[natural{t.TxID, t.Index}] = t
	}
	adoptLegacy(mine, legacy, credits)
	var out []store.Finding
	for k, c := range node {
		h := c.Height
		t, ok := mine[k]
		switch {
		case !ok:
			out = append(out, store.Finding{Kind: store.FindingMissing, TxID: c.TxID, Index: c.Index, Address: c.Address,
				AddressKey: c.Key, BlockHeight: &h, NodeAnswer: describeCredit(c), Ours: "not recorded"})
		case t.Amount.Cmp(c.Amount) != 0 || t.Asset != c.Asset || string(t.AddressKey) != string(c.Key) || *t.BlockHeight != c.Height:
			out = append(out, store.Finding{Kind: store.FindingMismatch, TxID: c.TxID, Index: c.Index, Address: c.Address,
				AddressKey: c.Key, BlockHeight: &h, NodeAnswer: describeCredit(c), Ours: describeTransfer(t)})
		}
	}
	for k, t := range mine {
		if _, ok := node[k]; ok {
			continue
		}
		h := *t.BlockHeight
		out = append(out, store.Finding{Kind: store.FindingUnexpected, TxID: t.TxID, Index: t.Index, Address: t.Address,
			AddressKey: t.AddressKey, BlockHeight: &h, NodeAnswer: "not in the node's view of block " + fmt.Sprint(h),
			Ours: describeTransfer(t)})
	}
	sort.Slice(out, func(i, j int) bool {
		if *out[i].BlockHeight != *out[j].BlockHeight {
			return *out[i].BlockHeight < *out[j].BlockHeight
		}
		if out[i].TxID != out[j].TxID {
			return out[i].TxID < out[j].TxID
		}
		return out[i].Index < out[j].Index
	})
	return out
}

func describeCredit(c Credit) string {
	return fmt.Sprintf("%s base units of %s to %s in block %d", c.Amount, c.Asset, c.Address, c.Height)
}

func describeTransfer(t store.Transfer) string {
	h := int64(-1)
	if t.BlockHeight != nil {
		h = *t.BlockHeight
	}
	return fmt.Sprintf("%s base units of %s to %s in block %d (%s, %s)", t.Amount, t.Asset, t.Address, h, t.ID, t.Status)
}

// urls matches a URL in an error text: node URLs carry credentials or API
// keys and never reach a finding, a log line or an API answer.
var urls = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']+`)

func redact(s string) string { return urls.ReplaceAllString(s, "[node url]") }
