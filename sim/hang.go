package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Leadership in the simulator (issue 32 item 6): each network's scanner
// runs as the holder of the network's lease (store.Lease, as ingest.Leader
// takes it) and writes through the Sink fenced with it. A hang freezes the
// leading instance in the middle of a step, right before one of its writes
// (having read the node), lets its lease expire and has a second instance
// take it over and scan; a wake, later, lets the frozen step go on with
// what it read before, and checks that it changed nothing.

// leaseClock never moves: the simulator's instances renew nothing on their
// own, and their leases (leaseTTL) do not expire while a history runs,
// however slow the machine. A hang stands for the TTL passing without a
// renewal by expiring the lease in the database.
var leaseClock = clock.NewFake(Start)

const leaseTTL = 24 * time.Hour

// fenceWrites is whether the scanners' writes carry their lease's fence;
// off (-no-fence) only to see what the simulator finds without it.
var fenceWrites = true

// hung is a frozen instance of a network's scanner.
type hung struct {
	name  string
	lease *store.Lease
	sink  *ingest.Sink
	g     *gate
	// ended receives the frozen step's result (once it ends).
	ended chan error
	// before: the step ended before it reached a write (the instance froze
	// between two steps).
	before bool
}

// gate freezes the writes of a scanner after left of them went through,
// until release is closed. Only the scanner's goroutine passes it.
type gate struct {
	left    int
	frozen  bool
	reached chan struct{}
	release chan struct{}
}

func (g *gate) pass() {
	if g.left > 0 {
		g.left--
		return
	}
	if g.frozen {
		return
	}
	g.frozen = true
	close(g.reached)
	<-g.release
}

type gatedCursor struct {
	chains.CursorStore
	g *gate
}

func (c gatedCursor) InitCursor(ctx context.Context, n payment.Network, h chains.Height, hash string) error {
	c.g.pass()
	return c.CursorStore.InitCursor(ctx, n, h, hash)
}

func (c gatedCursor) Reset(ctx context.Context, n payment.Network, h chains.Height, hash string) error {
	c.g.pass()
	return c.CursorStore.Reset(ctx, n, h, hash)
}

type gatedChain struct {
	chains.ChainHandler
	g *gate
}

func (c gatedChain) ApplyBlock(ctx context.Context, n payment.Network, b chains.Block, t chains.Tips) error {
	c.g.pass()
	return c.ChainHandler.ApplyBlock(ctx, n, b, t)
}

func (c gatedChain) Rewind(ctx context.Context, n payment.Network, h chains.Height, hash string) error {
	c.g.pass()
	return c.ChainHandler.Rewind(ctx, n, h, hash)
}

func (c gatedChain) ApplyTips(ctx context.Context, n payment.Network, t chains.Tips) error {
	c.g.pass()
	return c.ChainHandler.ApplyTips(ctx, n, t)
}

func (c gatedChain) ApplyPending(ctx context.Context, n payment.Network, p []chains.Transfer) error {
	c.g.pass()
	return c.ChainHandler.ApplyPending(ctx, n, p)
}

type gatedBatch struct {
	chains.BatchSink
	g *gate
}

func (c gatedBatch) ApplyBlocks(ctx context.Context, n payment.Network, bs []chains.Block, t chains.Tips) error {
	c.g.pass()
	return c.BatchSink.ApplyBlocks(ctx, n, bs, t)
}

type gatedBalance struct {
	chains.BalanceSink
	g *gate
}

func (c gatedBalance) CheckBalances(ctx context.Context, n payment.Network, t chains.Tips, src chains.BalanceChecker) error {
	c.g.pass()
	return c.BalanceSink.CheckBalances(ctx, n, t, src)
}

type gatedPending struct {
	chains.PendingRecorder
	g *gate
}

func (c gatedPending) RecordPending(ctx context.Context, n payment.Network, p []chains.Transfer) error {
	c.g.pass()
	return c.PendingRecorder.RecordPending(ctx, n, p)
}

func gated(s chains.Sinks, g *gate) chains.Sinks {
	return chains.Sinks{Cursor: gatedCursor{s.Cursor, g}, Chain: gatedChain{s.Chain, g}, Health: s.Health,
		Batch: gatedBatch{s.Batch, g}, Balance: gatedBalance{s.Balance, g}, Pending: gatedPending{s.Pending, g}}
}

// lead makes a new instance of n's scanner take n's lease: the history's
// first instance at the start, the standby at a hang. It reports whether
// it got the lease.
func (r *run) lead(n payment.Network) bool {
	r.instances++
	name := fmt.Sprintf("sim-%d", r.instances)
	l, ok, err := r.w.e.Store.TryLease(r.ctx, ingest.LeaseName(n), store.LeaseConfig{Holder: name, TTL: leaseTTL, Clock: leaseClock})
	if err != nil {
		r.violate("harness", "%s lease of %s: %v", name, n, err)
		return false
	}
	if !ok {
		return false
	}
	r.leases[n], r.holder[n] = l, name
	return true
}

// sink is what n's leading instance writes through: the Sink fenced with
// its lease.
func (r *run) sink(n payment.Network) *ingest.Sink {
	if l := r.leases[n]; l != nil && fenceWrites {
		return r.w.e.Sink.Fenced(l.Fence())
	}
	return r.w.e.Sink
}

// scanner is a scanner of n over sinks (as Env.NewScanner builds one).
func (r *run) scanner(n payment.Network, sinks chains.Sinks) *chains.Scanner {
	nc := r.w.e.Config.Networks[n]
	return chains.NewScanner(chains.ScannerConfig{Network: n, Chain: nc.Chain, PollInterval: 10 * time.Millisecond,
		Parallel: r.nodes[n].catchUpWindow(), SafetyDepth: nc.SafetyDepth, StartHeight: (*chains.Height)(nc.StartHeight)}, r.source(n), sinks,
		cappedKeys{Keys: &ingest.Keys{Store: r.w.e.Store}, nd: r.nodes[n]}, r.w.e.Watch[n], nil)
}

// hang freezes n's leading instance before its (a.B mod 3)-th write of a
// step, lets its lease expire, and has a standby take the lease and scan.
func (r *run) hang(n payment.Network, a Action) {
	if r.frozen[n] != nil {
		return // two instances: the other one leads
	}
	h := &hung{name: r.holder[n], lease: r.leases[n], sink: r.sink(n), ended: make(chan error, 1),
		g: &gate{left: a.B % 3, reached: make(chan struct{}), release: make(chan struct{})}}
	sc := r.scanner(n, gated(h.sink.ScannerSinks(), h.g))
	go func() {
		_, err := sc.Step(r.ctx)
		h.ended <- err
	}()
	select {
	case <-h.g.reached:
	case err := <-h.ended:
		h.ended <- err
		h.before = true
	}
	r.frozen[n] = h
	r.logf("%s %s hangs (before write %d of a step; between steps: %v)", n, h.name, a.B%3, h.before)
	// Its lease expires: the TTL passes without a renewal.
	if _, err := r.w.e.Store.Pool().Exec(r.ctx, `UPDATE leases SET expires_at = '-infinity' WHERE name = $1`, ingest.LeaseName(n)); err != nil {
		r.violate("harness", "expire the lease: %v", err)
		return
	}
	if !r.lead(n) {
		r.violate("a hung leader is replaced: a standby takes its lease once it expires, and detection goes on",
			"%s: the standby could not take the lease of the hung %s", n, h.name)
		return
	}
	r.newScanner(n)
	r.logf("%s %s takes the lease (token %d)", n, r.holder[n], r.leases[n].Token())
	r.scanNet(n, "standby takes over")
	r.logf("%s scan -> %s", n, r.cursorString(n))
}

// wake lets n's frozen instance go on: its step ends with what it read
// before it froze, it records its health and, if it froze between steps,
// it steps again, as Scanner.Run would. Nothing of what it does may
// change the books: its lease was taken over.
func (r *run) wake(n payment.Network) {
	h := r.frozen[n]
	if h == nil {
		return
	}
	delete(r.frozen, n)
	before, err := r.leaderState()
	if err != nil {
		r.violate("harness", "state before the wake: %v", err)
		return
	}
	if !h.before {
		close(h.g.release)
	}
	var stepErr error
	select {
	case stepErr = <-h.ended:
	case <-time.After(2 * time.Minute):
		r.violate("harness", "%s: the woken %s's step did not end", n, h.name)
		return
	}
	errs := []error{stepErr, h.sink.SetHealth(r.ctx, n, chains.Health{Healthy: stepErr == nil})}
	if h.before {
		g := &gate{left: 1 << 30, reached: make(chan struct{}), release: make(chan struct{})}
		_, err := r.scanner(n, gated(h.sink.ScannerSinks(), g)).Step(r.ctx)
		errs = append(errs, err)
	}
	after, err := r.leaderState()
	if err != nil {
		r.violate("harness", "state after the wake: %v", err)
		return
	}
	r.logf("%s %s wakes: %v", n, h.name, shortErrs(errs))
	if before != after {
		r.violate("a woken ex-leader writes nothing", "%s: the woken %s changed the cursors, blocks, transfers, intents or events (%v)",
			n, h.name, shortErrs(errs))
	}
	h.lease.Release()
}

func shortErrs(errs []error) string {
	s := ""
	for _, e := range errs {
		if e != nil {
			s += "[" + shorten(e.Error()) + "]"
		} else {
			s += "[ok]"
		}
	}
	return s
}

// leaderState is a digest of what only a leader writes, and what its
// writes decide.
func (r *run) leaderState() (string, error) {
	var d string
	err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT md5(coalesce(string_agg(x, '|' ORDER BY x), '')) FROM (
		SELECT row_to_json(c)::text AS x FROM cursors c UNION ALL SELECT row_to_json(b)::text FROM blocks b
		UNION ALL SELECT row_to_json(t)::text FROM transfers t UNION ALL SELECT row_to_json(i)::text FROM intents i
		UNION ALL SELECT row_to_json(e)::text FROM events e) s`).Scan(&d)
	return d, err
}

// releaseAll wakes every frozen instance and gives the leases up at the
// end of a history.
func (r *run) releaseAll() {
	for _, n := range r.h.Nets {
		r.wake(n)
		if l := r.leases[n]; l != nil {
			l.Release()
		}
	}
}
