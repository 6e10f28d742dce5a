package sim

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Violation is a broken invariant.
type Violation struct {
	Step      int
	Invariant string
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("step %d: [%s] %s", v.Step, v.Invariant, v.Detail)
}

// intentRec is an intent the history created.
type intentRec struct {
	id, kind, ref, account, method, address string
	network                                 payment.Network
	asset                                   payment.Asset
	amount                                  *big.Int
	key                                     []byte
	// shop is the intent's store.
	shop string
}

// txRec is a transaction the history sent.
type txRec struct {
	transfers []chains.Transfer
	network   payment.Network
	// disturbed: its block was replaced by a reorg, or it was evicted or
	// replaced in the mempool; only then may what it paid be undone.
	disturbed bool
}

// idemRec is a completed request with an Idempotency-Key, for replays.
type idemRec struct {
	method, path, key string
	body              []byte
	status            int
	resp              []byte
	network           payment.Network
	// scope and as: the key and headers it was sent with (scope "": the
	// storefront key).
	scope string
	as    []string
}

// resolvedRec is a finance decision the history made.
type resolvedRec struct {
	action, classBefore string
	// from is the transfer's intent when it was resolved, intent the one
	// credit_intent gave it to.
	from, intent string
}

// run is one history being executed on a world.
type run struct {
	w       *world
	h       History
	ctx     context.Context
	step    int
	orig    int // the step's index in the generated history
	nodes   map[payment.Network]*node
	scan    map[payment.Network]*chains.Scanner
	deep    map[payment.Network]bool // a reorg deeper than the safety depth happened (until a rescan)
	intents []*intentRec
	txs     map[string]*txRec
	txSeq   int
	idem    []idemRec
	res     map[string]resolvedRec
	// covered is what finance's decisions covered, by transfer, in base
	// units: what was unresolved when each was made.
	covered map[string]*big.Int
	trace   []string
	viol    []Violation
	chk     checker
	bodies  bodyCheck
	// rebuilt: the rebuild wrote statuses without events; the lifecycle and
	// event checks do not apply after it.
	rebuilt bool
	vmu     sync.Mutex // violate may be called from a concurrent debit's commit
	// stopAfter: stop at the first violation.
	stopAfter bool
	// leases and holder: each network's leading instance (hang.go);
	// frozen: its hung instance, if any; instances: how many were named.
	leases    map[payment.Network]*store.Lease
	holder    map[payment.Network]string
	frozen    map[payment.Network]*hung
	instances int
	// scanned: the cursor of a network whose last scanNet, in this
	// step, ended caught up (cursorAfterScan).
	scanned map[payment.Network]*chains.Cursor
	// across: the next finance decision is sent for the other store than
	// its transfer's (stores.go).
	across bool
	// held: the step froze or woke an instance, whose writes go through a
	// connection it holds.
	held bool
}

func (r *run) logf(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf("  %3d  ", r.orig)+fmt.Sprintf(format, args...))
}

func (r *run) violate(inv, format string, args ...any) {
	if ignored[inv] {
		return
	}
	r.vmu.Lock()
	defer r.vmu.Unlock()
	v := Violation{Step: r.step, Invariant: inv, Detail: fmt.Sprintf(format, args...)}
	r.viol = append(r.viol, v)
	r.trace = append(r.trace, "       !! "+v.String())
}

// rebuildEnabled ends every history with a rebuild (off with -no-rebuild).
var rebuildEnabled = true

// ignored are invariants whose violations are not reported (-ignore: to
// look past one broken invariant, e.g. on old code, never in CI).
var ignored = map[string]bool{}

// Run executes h on w and returns its violations and trace.
func Run(w *world, h History) ([]Violation, []string) {
	r := newRun(w, h)
	w.cur.Store(r)
	defer w.cur.Store(nil)
	defer r.releaseAll()
	if !r.start() {
		return r.viol, r.trace
	}
	for i, a := range h.Actions {
		r.step, r.orig = i+1, a.I
		// A frozen instance writes on the connection it holds, which the
		// pool does not count again (check).
		r.held = a.Kind == Hang || a.Kind == Wake
		r.exec(a)
		if len(r.viol) == 0 {
			r.check()
		}
		if len(r.viol) > 0 && r.stopAfter {
			break
		}
	}
	if len(r.viol) == 0 {
		// A hung instance still frozen wakes before the end.
		r.held = true
		for _, n := range r.h.Nets {
			r.wake(n)
		}
	}
	if len(r.viol) == 0 && rebuildEnabled {
		r.step = len(h.Actions) + 1
		r.rebuild()
		if len(r.viol) == 0 {
			r.check()
		}
	}
	if len(r.viol) == 0 && rebuildEnabled {
		r.rebuildStore()
		if len(r.viol) == 0 {
			r.check()
		}
	}
	// The faults left armed (sim_faults) go with the next history's reset.
	return r.viol, r.trace
}

func newRun(w *world, h History) *run {
	r := &run{w: w, h: h, ctx: context.Background(), nodes: map[payment.Network]*node{}, scan: map[payment.Network]*chains.Scanner{},
		deep: map[payment.Network]bool{}, txs: map[string]*txRec{}, res: map[string]resolvedRec{}, covered: map[string]*big.Int{}, stopAfter: true,
		leases: map[payment.Network]*store.Lease{}, holder: map[payment.Network]string{}, frozen: map[payment.Network]*hung{},
		scanned: map[payment.Network]*chains.Cursor{}}
	r.chk.init()
	return r
}

// start resets the world and starts the history's chains and scanners.
func (r *run) start() bool {
	w, h := r.w, r.h
	if err := w.reset(); err != nil {
		r.violate("harness", "reset: %v", err)
		return false
	}
	r.trace = append(r.trace, fmt.Sprintf("history seed=%d nets=%s steps=%d", h.Seed, netsString(h.Nets), len(h.Actions)))
	r.useConfig()
	for _, n := range h.Nets {
		f := chainstest.NewFake(w.e.Clock.Now)
		f.Mine(1)
		switch n {
		case payment.Solana, payment.Tron:
			f.SetFinal(int(safetyDepth[n]))
		case payment.Ethereum:
			// A finalized tag as a node has it: what 0 confirmations
			// (finality) waits for.
			f.SetFinal(int(safetyDepth[n]))
		}
		r.nodes[n] = &node{f: f, cap: -1, broadcast: map[string]bool{}}
		if !r.lead(n) {
			r.violate("harness", "%s: the first instance could not take the lease", n)
			return false
		}
		r.newScanner(n)
		r.scanNet(n, "start")
	}
	// No check here: the world is empty but for each chain's first
	// block, and the first step's check reads the same state and more.
	return len(r.viol) == 0
}

func (r *run) source(n payment.Network) chains.Source {
	if hasMempool(n) {
		return mempoolNode{r.nodes[n]}
	}
	return r.nodes[n]
}

func (r *run) newScanner(n payment.Network) {
	r.w.e.Watch[n] = chains.NewWatchSet(64)
	r.scan[n] = r.scanner(n, r.sink(n).ScannerSinks())
}

// cappedKeys is a scanner's key source that caps its node's reported tip
// at the cursor it reads + the scanner's window (node.cap), so that a
// catch-up never prefetches a window in the background: a step reads its
// cursor (with the watched keys, one round trip) before the node's tip.
type cappedKeys struct {
	*ingest.Keys
	nd *node
}

func (k cappedKeys) RefreshCursor(ctx context.Context, n payment.Network, set *chains.WatchSet) (chains.Cursor, error) {
	cur, err := k.Keys.RefreshCursor(ctx, n, set)
	k.nd.cap, k.nd.read = -1, nil
	if err == nil {
		k.nd.cap = cur.Height + chains.Height(k.nd.catchUpWindow())
		k.nd.read = &cur
	}
	return cur, err
}

// expected reports whether a scanner error has an injected cause.
func (r *run) expected(n payment.Network, err error) bool {
	switch {
	case errors.Is(err, errInjected):
		return true
	case strings.Contains(err.Error(), killMessage):
		return true
	case errors.Is(err, chains.ErrNodeBehind) && r.nodes[n].lag > 0:
		return true
	case errors.Is(err, chains.ErrDeepReorg) && r.deep[n]:
		return true
	}
	return false
}

// scanNet steps n's scanner until it is caught up, as Scanner.Run does,
// stopping at the first error; an error without an injected cause is a
// halted scanner. Scanner.Run records the health after each step; here it
// is recorded once, after the last: the steps before it all succeeded, so
// each would have recorded the same healthy state, which nothing reads
// while scanNet runs (a step stops on a critical state, which only a
// failed step, always the last, records).
func (r *run) scanNet(n payment.Network, why string) {
	sc := r.scan[n]
	delete(r.scanned, n)
	health := func(err error) {
		h := chains.Health{Healthy: err == nil}
		if err != nil {
			h.LastError = err.Error()
			if errors.Is(err, chains.ErrDeepReorg) {
				h.Critical = err.Error()
			}
		}
		if herr := r.sink(n).SetHealth(r.ctx, n, h); herr != nil && !strings.Contains(herr.Error(), killMessage) {
			r.violate("harness", "set health %s: %v", n, herr)
		}
	}
	for i := 0; i < 60; i++ {
		caughtUp, err := sc.Step(r.ctx)
		if err != nil || caughtUp {
			health(err)
		}
		if err != nil {
			if !r.expected(n, err) {
				r.violate("no scanner halts on business state", "%s scanner step failed (%s): %v", n, why, err)
			} else {
				r.logf("     %s scan stops: %v", n, shorten(err.Error()))
			}
			return
		}
		if caughtUp {
			// The caught-up step wrote the node's tips and the mempool,
			// never the cursor's height or hash: the cursor is the one it
			// read.
			if c := r.nodes[n].read; c != nil {
				r.scanned[n] = c
			}
			return
		}
	}
	health(nil)
	r.violate("no scanner halts on business state", "%s scanner not caught up after 60 steps", n)
}

// cursorAfterScan is n's cursor right after scanNet: the one its last
// step read when it ended caught up (no round trip), else the stored one.
func (r *run) cursorAfterScan(n payment.Network) (chains.Cursor, error) {
	if c := r.scanned[n]; c != nil {
		return *c, nil
	}
	return r.w.e.Sink.Cursor(r.ctx, n)
}

// cursorNow is n's cursor at the start of a step: the one the last check
// read (nothing writes between a check and the next step), else the
// stored one.
func (r *run) cursorNow(n payment.Network) (chains.Cursor, error) {
	if last := r.chk.last; last != nil {
		if c, ok := last.cursors[string(n)]; ok {
			return chains.Cursor{Height: chains.Height(c.height), Hash: c.hash}, nil
		}
	}
	return r.w.e.Sink.Cursor(r.ctx, n)
}

// cursorString is n's cursor right after scanNet, for the trace.
func (r *run) cursorString(n payment.Network) string {
	c, err := r.cursorAfterScan(n)
	if err != nil {
		return err.Error()
	}
	s := fmt.Sprintf("cursor %d %s", c.Height, short(c.Hash))
	if c.Critical != "" {
		s += " CRITICAL"
	}
	return s
}

func shorten(s string) string {
	if len(s) > 140 {
		return s[:140] + "…"
	}
	return s
}

// pick returns the intent at a modulo the intents created, or nil.
func (r *run) pick(a int) *intentRec {
	if len(r.intents) == 0 {
		return nil
	}
	return r.intents[a%len(r.intents)]
}

func (r *run) exec(a Action) {
	clear(r.scanned)
	n := r.h.Nets[a.Net%len(r.h.Nets)]
	nd := r.nodes[n]
	switch a.Kind {
	case Create:
		r.create(n, a)
	case Replay:
		r.replay(a)
	case Report:
		if in := r.pick(a.A); in != nil {
			scope, as := r.as(in.shop, "storefront")
			st, body := r.mutate("POST", "/v1/intents/"+in.id+"/report", scope, nil, as...)
			r.logf("%sreport %s (%s %s) -> %d %s", shopTag(in.shop), in.id, in.kind, in.ref, st, brief(body))
		}
	case Renew:
		if in := r.pick(a.A); in != nil {
			r.renew(in, a)
		}
	case Sweep:
		k, err := r.w.e.Service.Sweep(r.ctx)
		r.logf("sweep: %d due", k)
		if err != nil {
			r.violate("no scanner halts on business state", "deadline sweep failed: %v", err)
		}
	case Clock:
		d := time.Duration(1+a.A%25) * time.Minute
		r.w.e.Clock.Advance(d)
		r.logf("clock +%s -> %s", d, r.w.e.Clock.Now().Format("15:04"))
		r.moveQuotes(a)
	case Pay:
		r.pay(n, a)
	case Evict:
		mp := nd.f.Mempool()
		if len(mp) > 0 {
			t := mp[a.A%len(mp)]
			nd.f.Drop(t.TxID)
			r.disturb(t.TxID)
			r.logf("%s evict %s", n, r.txName(t.TxID))
		}
	case ReplaceTx:
		mp := nd.f.Mempool()
		if len(mp) > 0 {
			t := mp[a.A%len(mp)]
			nd.f.Drop(t.TxID)
			r.disturb(t.TxID)
			amt := new(big.Int).Set(t.Amount)
			if a.B%2 == 0 {
				amt.Div(amt, big.NewInt(2))
				amt.Add(amt, big.NewInt(1))
			}
			nt := r.newTx(n)
			tr := chains.Transfer{TxID: nt, Index: t.Index, Asset: t.Asset, Key: t.Key, Address: t.Address, Amount: amt}
			nd.f.Broadcast(tr)
			nd.broadcast[nt] = true
			r.txs[nt].transfers = []chains.Transfer{tr}
			r.logf("%s replace %s by %s (%s)", n, r.txName(t.TxID), r.txName(nt), amt)
		}
	case Mine:
		k := 1 + a.A%3
		var stamp time.Duration
		switch a.B % 4 {
		case 1:
			stamp = -time.Duration(1+a.C%90) * time.Minute
		case 2:
			stamp = time.Duration(1+a.C%90) * time.Minute
		}
		nd.f.SetStamp(stamp)
		nd.f.Mine(k)
		nd.f.SetStamp(0)
		r.logf("%s mine %d (stamp %+v) -> tip %d", n, k, stamp, nd.f.TipHeight())
		if a.D%2 == 0 {
			r.scanNet(n, "after mine")
			r.logf("%s scan -> %s", n, r.cursorString(n))
		}
	case Reorg:
		r.reorg(n, nd, a)
	case Remine:
		r.remine(n, nd, a)
	case Lag:
		nd.lag, nd.race = a.A%4, a.B%2 == 0
		r.logf("%s node lag %d (mempool read ahead of the tip: %v)", n, nd.lag, nd.race)
	case Fault:
		r.fault(n, nd, a)
	case Skip:
		if n == payment.Solana {
			nd.f.Skip()
			nd.f.Mine(1)
			r.logf("%s skipped slot %d, tip %d", n, nd.f.TipHeight()-1, nd.f.TipHeight())
		}
	case Debit:
		r.debit(a)
	case Resolve:
		r.resolve(a)
	case Rescan:
		r.rescan(n, a)
	case Scan:
		r.scanNet(n, "scan")
		r.logf("%s scan -> %s", n, r.cursorString(n))
	case RestartScanner:
		r.newScanner(n)
		r.logf("%s scanner restarts", n)
	case RestartService:
		r.restartService()
		r.logf("service restarts")
	case Kill:
		r.kill(n, a)
	case RoundTrip:
		r.roundTrip(n, nd, a)
	case LoseTransfer:
		r.loseTransfer(n, a)
	case Hang:
		r.hang(n, a)
	case Wake:
		r.wake(n)
	case LateCredit:
		r.lateCredit(a)
	}
}

func (r *run) restartService() {
	r.w.e.RestartService()
	for _, n := range r.h.Nets {
		r.newScanner(n)
	}
}
