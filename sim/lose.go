package sim

import (
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/store"
)

// loseTransfer is the LoseTransfer action (issue 27): with the network's
// node healthy and scanned, one recorded transfer in a block is deleted
// behind paywatch's back, as a lost write would; one run of the reconciler
// over the node must find it missing (invariant invLost). The row is then
// put back as it was, so that the history's other checks go on from the
// same books; the rescan the finding asked for replays idempotently and the
// reconciler's re-check resolves it.
func (r *run) loseTransfer(n payment.Network, a Action) {
	if !r.settle(n, "lose a transfer: settle") {
		return
	}
	pool := r.w.e.Store.Pool()
	var ids []string
	rows, err := pool.Query(r.ctx, `SELECT id FROM transfers WHERE network = $1 AND block_height IS NOT NULL
		AND status <> 'orphaned' AND txid NOT LIKE 'balance:%' ORDER BY id`, string(n))
	if err == nil {
		for rows.Next() {
			var id string
			if err = rows.Scan(&id); err != nil {
				break
			}
			ids = append(ids, id)
		}
		rows.Close()
	}
	if err != nil {
		r.violate("harness", "lose a transfer: %v", err)
		return
	}
	if len(ids) == 0 {
		return
	}
	id := ids[a.A%len(ids)]
	lost, err := r.w.e.Store.GetTransfer(r.ctx, id)
	if err != nil {
		r.violate("harness", "lose a transfer: %v", err)
		return
	}
	conn, err := pool.Acquire(r.ctx)
	if err != nil {
		r.violate("harness", "lose a transfer: %v", err)
		return
	}
	defer conn.Release()
	exec := func(q string, args ...any) bool {
		if _, err := conn.Exec(r.ctx, q, args...); err != nil {
			r.violate("harness", "lose a transfer: %s: %v", q, err)
			return false
		}
		return true
	}
	if !exec(`SET session_replication_role = replica`) ||
		!exec(`CREATE TEMP TABLE IF NOT EXISTS sim_lost AS SELECT * FROM transfers WITH NO DATA`) ||
		!exec(`DELETE FROM sim_lost`) ||
		!exec(`INSERT INTO sim_lost SELECT * FROM transfers WHERE id = $1`, id) ||
		!exec(`DELETE FROM transfers WHERE id = $1`, id) {
		return
	}
	defer func() {
		exec(`INSERT INTO transfers SELECT * FROM sim_lost`)
		exec(`SET session_replication_role = origin`)
		r.scanNet(n, "lose a transfer: the rescan replays")
	}()
	r.logf("%s lose transfer %s (tx %s:%d, block %d)", n, id, r.txName(lost.TxID), lost.Index, *lost.BlockHeight)
	nd := r.nodes[n]
	rec, err := reconcile.New(r.w.e.Store, reconcile.Config{Blocks: 1 << 20, MaxBlocks: 1 << 20, RatePerSecond: -1},
		map[payment.Network]reconcile.View{n: &reconcile.BlockView{Source: nd.f, Watched: r.w.e.Watch[n]}}, nil)
	if err != nil {
		r.violate("harness", "reconciler: %v", err)
		return
	}
	rep, err := rec.RunOnce(r.ctx, n)
	if err != nil {
		r.violate(Invariants[invLost], "%s reconciler run failed: %v", n, err)
		return
	}
	for _, f := range rep.Findings {
		if f.Kind == store.FindingMissing && f.TxID == lost.TxID && f.Index == lost.Index {
			return
		}
	}
	r.violate(Invariants[invLost], "%s transfer %s (tx %s:%d in block %d) deleted and not found by a reconciler run over [%d, %d] (%s): %d findings",
		n, id, r.txName(lost.TxID), lost.Index, *lost.BlockHeight, rep.From, rep.To, rep.Skipped, len(rep.Findings))
}
