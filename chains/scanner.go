package chains

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
)

// ErrNoCursor is returned by CursorStore.Cursor before the network's first scan.
var ErrNoCursor = errors.New("no cursor yet")

// ErrDeepReorg is the sticky failure of a reorg deeper than the safety
// depth: the scanner stops at its cursor until an operator rescans.
var ErrDeepReorg = errors.New("reorg deeper than the safety depth")

// ErrNoStoredBlock is returned (wrapped) by CursorStore.BlockHash when no block
// is kept at the height: a walk-back that reaches it has gone deeper than
// the stored history. Any other BlockHash error is transient.
var ErrNoStoredBlock = errors.New("no stored block at that height")

// ErrFinalityViolation is the deep reorg of a block at or below the height
// the node had declared final: whatever the configured safety depth, the
// chain broke its own finality. It is critical and sticky like ErrDeepReorg.
var ErrFinalityViolation = fmt.Errorf("%w: a finalized block was replaced", ErrDeepReorg)

// ErrNodeInconsistent is a node whose block above the cursor does not
// extend it while the cursor block is still on its chain (a load balancer
// mixing replicas, a reorg between two reads): the step is retried after a
// backoff, nothing is rewound.
var ErrNodeInconsistent = errors.New("the node's chain does not extend its own block at the cursor")

// ScannerConfig configures one network's scanner.
type ScannerConfig struct {
	Network payment.Network
	// Chain is the configured chain (mainnet, testnet or regtest). When set
	// and the source is a ChainVerifier, the node's chain is checked before
	// the first step and at least every poll interval; a mismatch
	// (ErrWrongChain) is critical and stops the scanner at its cursor.
	Chain string
	// PollInterval between tip checks when caught up.
	PollInterval time.Duration
	// Parallel blocks fetched at once when catching up.
	Parallel int
	// SafetyDepth: a reorg deeper than this many blocks is ErrDeepReorg.
	SafetyDepth int64
	// StartHeight is the first height a fresh scanner scans (nil: the tip).
	StartHeight *Height
	// MaxBackoff caps the retry delay after an error.
	MaxBackoff time.Duration
	// Observe, when set, is called after every step with its error (nil on
	// success), for metrics.
	Observe func(err error)
	// Clock waits between steps (a poll interval or a backoff); nil is the
	// wall clock. Tests inject one.
	Clock clock.Clock
	// StallClock times a step waiting on its node (StallAfter); nil is the
	// wall clock. It is not Clock: a node that does not answer is a wait in
	// real time, and a test that moves Clock by hours between steps must
	// not make a step look stalled.
	StallClock clock.Clock
}

// Scanner owns one network's cursor: one goroutine reads blocks in order,
// checks parent hashes, walks back on a reorg, and hands each block to the
// Sinks. A fetch error retries from the cursor; it never skips a height.
type Scanner struct {
	cfg     ScannerConfig
	src     Source
	sinks   Sinks
	keys    KeySource
	watched *WatchSet
	log     *slog.Logger
	wake    chan struct{}

	mu       sync.Mutex
	lastTips Tips
	// ahead is the next catch-up window, fetched while the last one was
	// applied.
	ahead *prefetch
	// checkedTips are the tips of the last successful balance check.
	checkedTips Tips
	// lastPending are the txids of the last mempool read handed to the sink
	// in full (pendingKnown), to tell when one went missing.
	lastPending  map[string]bool
	pendingKnown bool
	// noPending: the last ApplyPending succeeded with an empty mempool
	// read and the scanner has handed the sink no mempool transfer since,
	// so the network has no pending transfer (only a mempool read records
	// one) and another empty ApplyPending would change nothing (emptyAgain).
	noPending bool
	// chainVerifiedAt is when the node's chain was last found right.
	chainVerifiedAt time.Time
}

// NewScanner returns a scanner for one network. sinks.Cursor, Chain and
// Health must be set; keys may be nil (the watched set is not refreshed).
func NewScanner(cfg ScannerConfig, src Source, sinks Sinks, keys KeySource, watched *WatchSet, log *slog.Logger) *Scanner {
	if cfg.Parallel < 1 {
		cfg.Parallel = 1
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	log = logs.Or(log)
	cfg.Clock = clock.Or(cfg.Clock)
	cfg.StallClock = clock.Or(cfg.StallClock)
	return &Scanner{cfg: cfg, src: src, sinks: sinks, keys: keys, watched: watched,
		log: log.With("component", "scanner", "network", string(cfg.Network)), wake: make(chan struct{}, 1)}
}

// Wake makes the scanner check the node now (a new-block notification).
func (s *Scanner) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run scans until ctx ends; cancellation is a clean exit (nil).
func (s *Scanner) Run(ctx context.Context) error {
	failures := 0
	// logged is the critical failure last logged at Error: a refusal that
	// repeats every step is logged once per change, not every second.
	logged := ""
	for {
		caughtUp, err := s.watchedStep(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if s.cfg.Observe != nil {
			s.cfg.Observe(err)
		}
		// Node errors name the node by its host only: the message goes to the
		// database, the API and the logs.
		err = RedactError(err)
		h := Health{Healthy: err == nil}
		if err != nil {
			h.LastError = err.Error()
			switch {
			case errors.Is(err, ErrWrongChain):
				h.Critical = err.Error()
				if h.Critical != logged {
					s.log.Error("the node is on another chain than configured: scanner stopped at its cursor", "chain", s.cfg.Chain, "err", err)
				}
			case errors.Is(err, ErrDeepReorg):
				h.Critical = err.Error()
				if h.Critical != logged {
					s.log.Error("deep reorg: scanner stopped at its cursor until an operator rescans", "err", err)
				}
			default:
				s.log.Warn("scan step failed", "err", err)
			}
		}
		if h.Critical != logged {
			if logged != "" && h.Critical == "" {
				s.log.Info("the critical state ended", "was", logged)
			}
			logged = h.Critical
		}
		if herr := s.sinks.Health.SetHealth(ctx, s.cfg.Network, h); herr != nil && ctx.Err() == nil {
			s.log.Warn("recording health failed", "err", herr)
		}
		var wait time.Duration
		switch {
		case err != nil:
			failures++
			wait = s.backoff().Delay(failures)
		case caughtUp:
			failures = 0
			wait = s.cfg.PollInterval
		default:
			failures = 0
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		case <-s.cfg.Clock.After(wait):
		}
	}
}

// stallFloor is the least time a step may wait on its node before the
// network is recorded unhealthy, whatever the poll interval: a loaded
// machine may take this long for a healthy step.
const stallFloor = 5 * time.Second

// StallAfter is how long a step may wait on the node before the scanner
// records the network unhealthy while the step still waits: two poll
// intervals (at least stallFloor). A caught-up scanner steps every poll
// interval, so a frozen node (it accepts connections and never answers)
// makes new intents refused within two poll intervals, not when the node
// call finally times out.
func (s *Scanner) StallAfter() time.Duration {
	return max(2*s.cfg.PollInterval, stallFloor)
}

// watchedStep is Step, recording the network unhealthy once the step has
// waited StallAfter on its node. The record is written before watchedStep
// returns, so Run's record of the step's outcome comes after it.
func (s *Scanner) watchedStep(ctx context.Context) (bool, error) {
	limit := s.StallAfter()
	t := s.cfg.StallClock.NewTimer(limit)
	done, fired := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fired)
		select {
		case <-done:
		case <-ctx.Done():
		case <-t.C:
			msg := fmt.Sprintf("the node has not answered for %s (two poll intervals): a scan step is still waiting on it", limit)
			s.log.Warn("scan step stalled on the node", "after", limit)
			if err := s.sinks.Health.SetHealth(ctx, s.cfg.Network, Health{LastError: msg}); err != nil && ctx.Err() == nil {
				s.log.Warn("recording health failed", "err", err)
			}
		}
	}()
	caughtUp, err := s.Step(ctx)
	t.Stop()
	close(done)
	<-fired
	return caughtUp, err
}

// stoppedError is a step of a network whose critical failure is recorded
// (a deep reorg, a node on another chain): the scanner stays at its cursor
// until an operator rescans. It matches ErrDeepReorg, the error every
// critical stop of the scanner matches, whatever the recorded cause.
type stoppedError struct{ critical string }

func (e *stoppedError) Error() string {
	return "stopped at the cursor until an operator rescans: " + e.critical
}

func (e *stoppedError) Is(target error) bool { return target == ErrDeepReorg }

// backoff is the retry delay after failed steps: from the poll interval,
// doubling up to MaxBackoff, the lower half drawn at random. MaxBackoff
// caps it even when the poll interval is longer (a node that fails is
// retried sooner than a healthy one is polled).
func (s *Scanner) backoff() clock.Backoff {
	return clock.Backoff{Min: min(s.cfg.PollInterval, s.cfg.MaxBackoff), Max: s.cfg.MaxBackoff, Factor: 2, Jitter: 0.5}
}

// readCursor refreshes the watched set and reads the cursor (ErrNoCursor
// before the first scan), in one round trip when the key source reads the
// cursor too.
func (s *Scanner) readCursor(ctx context.Context) (Cursor, error) {
	n := s.cfg.Network
	if kc, ok := s.keys.(KeyCursorSource); ok {
		cur, err := kc.RefreshCursor(ctx, n, s.watched)
		if err != nil && !errors.Is(err, ErrNoCursor) {
			return cur, fmt.Errorf("cursor and watched addresses: %w", err)
		}
		return cur, err
	}
	if s.keys != nil {
		if err := s.keys.Refresh(ctx, n, s.watched); err != nil {
			return Cursor{}, fmt.Errorf("refresh watched addresses: %w", err)
		}
	}
	cur, err := s.sinks.Cursor.Cursor(ctx, n)
	if err != nil && !errors.Is(err, ErrNoCursor) {
		return cur, fmt.Errorf("cursor: %w", err)
	}
	return cur, err
}

// Step does one unit of work: catch up a batch of blocks, or record new
// tips and the mempool. It reports whether the scanner is caught up.
func (s *Scanner) Step(ctx context.Context) (bool, error) {
	n := s.cfg.Network
	// Before anything is read or written: a node on another chain must not
	// even place a fresh cursor.
	if err := s.verifyChain(ctx); err != nil {
		return false, err
	}
	// The watched set is refreshed before the node is read, so a block
	// the node reports is scanned for every address handed out before.
	cur, curErr := s.readCursor(ctx)
	if curErr != nil && !errors.Is(curErr, ErrNoCursor) {
		return false, curErr
	}
	tip, err := s.src.Tip(ctx)
	if err != nil {
		return false, fmt.Errorf("node tip: %w", err)
	}
	final, err := s.src.FinalizedHeight(ctx)
	if err != nil {
		return false, fmt.Errorf("node finalized height: %w", err)
	}
	tips := Tips{Node: tip, Final: final}
	if curErr != nil {
		return false, s.init(ctx, tip)
	}
	if cur.Critical != "" {
		return true, &stoppedError{critical: cur.Critical}
	}
	if cur.RescanFrom != nil {
		return false, s.rescan(ctx, *cur.RescanFrom)
	}
	if cur.Height < tips.Node {
		return false, s.catchUp(ctx, cur, tips)
	}
	if cur.Height > tips.Node {
		return false, s.behind(ctx, cur, tips)
	}
	if replaced, err := s.tipReplaced(ctx, cur); err != nil || replaced {
		if err != nil {
			return false, err
		}
		return false, s.checkReorg(ctx, cur, tips)
	}
	s.mu.Lock()
	changed := s.lastTips != tips
	s.lastTips = tips
	s.mu.Unlock()
	if changed {
		if err := s.sinks.Chain.ApplyTips(ctx, n, tips); err != nil {
			return false, fmt.Errorf("apply tips: %w", err)
		}
	}
	if err := s.checkBalances(ctx, tips); err != nil {
		return true, fmt.Errorf("balance check: %w", err)
	}
	if ps, ok := s.src.(PendingSource); ok {
		pending, err := ps.Pending(ctx, s.watched)
		if err != nil {
			return true, fmt.Errorf("mempool: %w", err)
		}
		state, err := s.mempoolState(ctx, tips, pending)
		if err != nil {
			return true, err
		}
		switch state {
		case mempoolComplete:
			if s.emptyAgain(pending) {
				break
			}
			err = s.sinks.Chain.ApplyPending(ctx, n, pending)
		case mempoolTipMoved:
			// A block came in since the tip read: scan it first (the next
			// step), then read the mempool again.
			return false, nil
		case mempoolTipLags:
			// The node's tip lags its own mempool: record what is in the
			// mempool, take nothing for vanished.
			if s.sinks.Pending != nil {
				s.mu.Lock()
				s.noPending = false
				s.mu.Unlock()
				err = s.sinks.Pending.RecordPending(ctx, n, pending)
			}
		}
		if err != nil {
			return true, fmt.Errorf("apply mempool: %w", err)
		}
		s.mu.Lock()
		s.lastPending, s.pendingKnown = txids(pending), state == mempoolComplete
		if state == mempoolComplete && len(pending) == 0 {
			s.noPending = true
		}
		s.mu.Unlock()
	}
	return true, nil
}

// emptyAgain reports whether pending is empty and so was the last
// mempool read the sink applied, with no mempool transfer handed to it
// since (noPending): the ApplyPending would find no pending transfer to
// record or orphan, and a quiet mempool costs no transaction. Otherwise a
// non-empty read is about to be handed to the sink, and noPending ends.
func (s *Scanner) emptyAgain(pending []Transfer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(pending) == 0 {
		return s.noPending
	}
	s.noPending = false
	return false
}

// What a mempool read may be taken for (mempoolState).
const (
	// mempoolComplete: the blocks up to the node's current tip are scanned,
	// so a recorded mempool transfer missing from the read vanished.
	mempoolComplete = iota
	// mempoolTipMoved: a block came in after the tip read; it may hold a
	// transfer that left the mempool.
	mempoolTipMoved
	// mempoolTipLags: the node already has a block above the tip it
	// reports.
	mempoolTipLags
)

// mempoolState tells whether a recorded mempool transfer missing from
// pending may be taken for vanished: only once the blocks up to the node's
// current tip were scanned. A block mined between the tip read and the
// mempool read took the transfer out of the mempool into a block not
// scanned yet; a node whose tip lags its mempool already has the block
// above its tip. Both are checked only when a transaction of the last read
// is missing now (or after a start), so a quiet mempool costs no call.
func (s *Scanner) mempoolState(ctx context.Context, tips Tips, pending []Transfer) (int, error) {
	s.mu.Lock()
	known, last := s.pendingKnown, s.lastPending
	s.mu.Unlock()
	if known {
		now := txids(pending)
		missing := false
		for id := range last {
			if !now[id] {
				missing = true
				break
			}
		}
		if !missing {
			return mempoolComplete, nil
		}
	}
	again, err := s.src.Tip(ctx)
	if err != nil {
		return 0, fmt.Errorf("node tip: %w", err)
	}
	if again != tips.Node {
		return mempoolTipMoved, nil
	}
	_, err = s.src.Block(ctx, tips.Node+1, s.watched)
	switch {
	case errors.Is(err, ErrBlockNotFound):
		return mempoolComplete, nil
	case err == nil || errors.Is(err, ErrSkipped):
		return mempoolTipLags, nil
	}
	return 0, fmt.Errorf("block %d above the tip: %w", tips.Node+1, err)
}

func txids(ts []Transfer) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t.TxID] = true
	}
	return m
}

// checkBalances runs the BalanceSink's check once per new tips, when the
// source can miss native payments (BalanceChecker, BalanceNeed) and the
// scanner is caught up, so every block up to the checked heights is
// recorded. A failure is retried at the next step.
func (s *Scanner) checkBalances(ctx context.Context, tips Tips) error {
	bc, ok := s.src.(BalanceChecker)
	if !ok || s.sinks.Balance == nil {
		return nil
	}
	if need, ok := s.src.(BalanceNeed); ok && !need.NeedsBalanceCheck() {
		return nil
	}
	s.mu.Lock()
	done := s.checkedTips == tips
	s.mu.Unlock()
	if done {
		return nil
	}
	if err := s.sinks.Balance.CheckBalances(ctx, s.cfg.Network, tips, bc); err != nil {
		return err
	}
	s.mu.Lock()
	s.checkedTips = tips
	s.mu.Unlock()
	return nil
}

// init creates the cursor just below the first height to scan.
func (s *Scanner) init(ctx context.Context, tip Height) error {
	start := tip
	if s.cfg.StartHeight != nil {
		start = *s.cfg.StartHeight
	}
	at := max(start-1, 0)
	b, err := s.blockAt(ctx, at)
	if err != nil {
		return fmt.Errorf("start block %d: %w", at, err)
	}
	s.log.Info("scanner starts", "height", b.Height+1)
	return s.sinks.Cursor.InitCursor(ctx, s.cfg.Network, b.Height, b.Hash)
}

// blockAt returns the block at h, or the nearest block below a skipped slot.
func (s *Scanner) blockAt(ctx context.Context, h Height) (BlockRef, error) {
	for {
		b, err := Header(ctx, s.src, h)
		if errors.Is(err, ErrSkipped) && h > 0 {
			h--
			continue
		}
		return b, err
	}
}

// rescan replays from height: the cursor moves back (nothing is orphaned;
// replays are harmless) and the request is cleared.
func (s *Scanner) rescan(ctx context.Context, from Height) error {
	at := max(from-1, 0)
	b, err := s.blockAt(ctx, at)
	if err != nil {
		return fmt.Errorf("rescan from %d: %w", from, err)
	}
	// The chain may have been reorganized at or below the start since we
	// stored those blocks: start from the common ancestor, so that the
	// replay applies every replaced height again (and so orphans what the
	// replaced blocks held) instead of taking the node's block as a given.
	for depth := int64(0); ; depth++ {
		stored, err := s.sinks.Cursor.BlockHash(ctx, s.cfg.Network, b.Height)
		if errors.Is(err, ErrNoStoredBlock) || err == nil && stored == b.Hash {
			break
		}
		if err != nil {
			return fmt.Errorf("rescan from %d: stored block %d: %w", from, b.Height, err)
		}
		if b.Height == 0 || depth >= s.cfg.SafetyDepth {
			return fmt.Errorf("%w: rescan from %d: no common ancestor within %d blocks below height %d", ErrDeepReorg, from, s.cfg.SafetyDepth, at)
		}
		if b, err = s.blockAt(ctx, b.Height-1); err != nil {
			return fmt.Errorf("rescan from %d: %w", from, err)
		}
	}
	s.log.Info("rescan", "from", b.Height+1)
	return s.sinks.Cursor.Reset(ctx, s.cfg.Network, b.Height, b.Hash)
}

type fetched struct {
	b   Block
	err error
}

// catchUp fetches up to Parallel blocks above the cursor at once and applies
// them in order; it stops at the first error or reorg. While it applies a
// window it fetches the next one (prefetch), which the next step uses.
func (s *Scanner) catchUp(ctx context.Context, cur Cursor, tips Tips) error {
	if sp, ok := s.sparse(); ok {
		return s.catchUpSparse(ctx, sp, cur, tips)
	}
	height, hash := cur.Height, cur.Hash
	for from := cur.Height + 1; ; {
		to := min(tips.Node, from+Height(s.cfg.Parallel)-1)
		results := s.fetchAhead(ctx, from, to)
		// The blocks that extend the cursor are applied together (in one
		// transaction by a BatchSink) before any stop.
		var ready []Block
		for i, r := range results {
			h := from + Height(i)
			if errors.Is(r.err, ErrSkipped) {
				continue
			}
			var stop error
			switch {
			case errors.Is(r.err, ErrBlockNotFound):
				// The tip moved back under us; the next step sees it.
			case r.err != nil:
				stop = fmt.Errorf("block %d: %w", h, r.err)
			case r.b.Height != h:
				stop = fmt.Errorf("block %d: node returned height %d: %w", h, r.b.Height, ErrInvalidResponse)
			case r.b.Parent != hash:
				if err := s.apply(ctx, ready, tips); err != nil {
					return err
				}
				// Walk back from the last block applied: after a slot reported
				// skipped, h-1 is not a stored block.
				return s.checkReorg(ctx, Cursor{Height: height, Hash: hash, Final: cur.Final}, tips)
			default:
				ready = append(ready, r.b)
				height, hash = h, r.b.Hash
				continue
			}
			if err := s.apply(ctx, ready, tips); err != nil {
				return err
			}
			return stop
		}
		if len(ready) > 0 && to < tips.Node {
			s.prefetch(ctx, to+1, min(tips.Node, to+Height(s.cfg.Parallel)))
		}
		if err := s.apply(ctx, ready, tips); err != nil {
			return err
		}
		// A batch of skipped slots only leaves the cursor where it is (it
		// moves with blocks), so the step reads on rather than reading the
		// same slots again next time.
		if len(ready) > 0 || to >= tips.Node {
			break
		}
		from = to + 1
	}
	s.mu.Lock()
	s.lastTips = tips
	s.mu.Unlock()
	return nil
}

// fetch reads the heights from..to at once.
func (s *Scanner) fetch(ctx context.Context, from, to Height) []fetched {
	results := make([]fetched, to-from+1)
	var wg sync.WaitGroup
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b, err := s.src.Block(fctx, from+Height(i), s.watched)
			results[i] = fetched{b, err}
		}(i)
	}
	wg.Wait()
	return results
}

// behind handles a node whose best height is below the cursor. Only proof
// that our blocks left its chain makes it a reorg (rewind): the node says our
// cursor block is off its best chain, or its block at its own tip is not the
// one we stored there. Otherwise the node is lagging (a provider behind a
// load balancer, a resync): wait, rewind nothing.
func (s *Scanner) behind(ctx context.Context, cur Cursor, tips Tips) error {
	if m, ok := s.src.(ChainMembership); ok {
		known, best, err := m.InBestChain(ctx, cur.Hash)
		if err != nil {
			return fmt.Errorf("is block %d on the node's chain: %w", cur.Height, err)
		}
		if known && !best {
			return s.checkReorg(ctx, cur, tips)
		}
	}
	stored, err := s.sinks.Cursor.BlockHash(ctx, s.cfg.Network, tips.Node)
	if err != nil && !errors.Is(err, ErrNoStoredBlock) {
		return fmt.Errorf("stored block %d: %w", tips.Node, err)
	}
	if err == nil {
		b, err := Header(ctx, s.src, tips.Node)
		if err == nil && b.Hash != stored {
			return s.checkReorg(ctx, cur, tips)
		}
		if err != nil && !errors.Is(err, ErrSkipped) {
			return fmt.Errorf("block %d: %w", tips.Node, err)
		}
	}
	return fmt.Errorf("%w: node at %d, cursor at %d; waiting for it to catch up", ErrNodeBehind, tips.Node, cur.Height)
}

// checkReorg walks back from the cursor until the stored hash equals the
// node's, then rewinds there. Deeper than the safety depth, below the stored
// history, or through a block the node had declared final is ErrDeepReorg.
// A cursor block that still matches is ErrNodeInconsistent (backed off, not
// rewound); a failing read of the stored hashes is transient.
func (s *Scanner) checkReorg(ctx context.Context, cur Cursor, tips Tips) error {
	top := min(cur.Height, tips.Node)
	// The stored hashes the walk-back may compare with, in one read when
	// the cursor store can: only this scanner writes them.
	var stored map[Height]string
	if r, ok := s.sinks.Cursor.(BlockHashRange); ok && top >= 0 {
		from := max(0, cur.Height-Height(s.cfg.SafetyDepth))
		var err error
		if stored, err = r.BlockHashes(ctx, s.cfg.Network, min(from, top), top); err != nil {
			return fmt.Errorf("reorg walk-back: stored blocks %d..%d: %w", from, top, err)
		}
	}
	storedAt := func(h Height) (string, error) {
		if stored == nil {
			return s.sinks.Cursor.BlockHash(ctx, s.cfg.Network, h)
		}
		if hash, ok := stored[h]; ok {
			return hash, nil
		}
		return "", fmt.Errorf("%s block %d: %w", s.cfg.Network, h, ErrNoStoredBlock)
	}
	for h := top; h >= 0; h-- {
		if cur.Height-h > Height(s.cfg.SafetyDepth) {
			return fmt.Errorf("%w: no common ancestor within %d blocks below height %d", ErrDeepReorg, s.cfg.SafetyDepth, cur.Height)
		}
		b, err := Header(ctx, s.src, h)
		if errors.Is(err, ErrSkipped) {
			continue // a skipped slot has no stored block either
		}
		if err != nil {
			return fmt.Errorf("reorg walk-back at %d: %w", h, err)
		}
		hash, err := storedAt(h)
		if errors.Is(err, ErrNoStoredBlock) {
			return fmt.Errorf("%w: no stored block at %d below cursor %d: %w", ErrDeepReorg, h, cur.Height, err)
		}
		if err != nil {
			return fmt.Errorf("reorg walk-back: stored block %d: %w", h, err)
		}
		if b.Hash == hash {
			if h == cur.Height {
				return fmt.Errorf("%w: block %d %s", ErrNodeInconsistent, h, hash)
			}
			s.log.Warn("reorg: rewinding to the common ancestor", "ancestor", h, "depth", cur.Height-h)
			return s.sinks.Chain.Rewind(ctx, s.cfg.Network, h, b.Hash)
		}
		if h <= cur.Final {
			return fmt.Errorf("%w: block %d changed, the node had reported height %d final (cursor %d)", ErrFinalityViolation, h, cur.Final, cur.Height)
		}
	}
	return fmt.Errorf("%w: no common ancestor", ErrDeepReorg)
}
