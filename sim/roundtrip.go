package sim

import (
	"context"
	"math/rand/v2"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// settle brings network n to a state a round trip or a rebuild can compare
// from: the node healthy and caught up, blocks mined until every transfer
// on the chain has the confirmations any intent may need (finality
// included), everything scanned. It reports whether the scan got there.
func (r *run) settle(n payment.Network, why string) bool {
	nd := r.nodes[n]
	for h := 0; h < len(nd.f.Chain())+8; h++ {
		nd.f.FailBlock(chains.Height(h), nil)
	}
	nd.f.FailTip(nil)
	nd.lag = 0
	nd.f.Mine(r.deepest(n) + 1)
	if r.deep[n] {
		return false
	}
	before := len(r.viol)
	r.scanNet(n, why)
	if len(r.viol) > before {
		return false
	}
	cur, err := r.cursorAfterScan(n)
	return err == nil && cur.Height == nd.f.TipHeight()
}

// deepest is the most blocks any transfer of network n needs to be
// confirmed under the history's config (finality counted as the fake's
// finality lag).
func (r *run) deepest(n payment.Network) int {
	d := int(safetyDepth[n]) + 1
	for _, m := range payment.Methods {
		if m.Network != n {
			continue
		}
		mc := r.w.e.Config.Methods[m.Method]
		if mc.Confirmations != nil {
			d = max(d, *mc.Confirmations)
		}
		if mc.LargeConfirmations != nil && mc.LargeAmountUSD != "" {
			d = max(d, *mc.LargeConfirmations)
		}
	}
	return d
}

// roundTrip is the RoundTrip action: with every transfer of the network
// confirmed, the last 1 … safety_depth−1 blocks are taken away by a longer
// branch of empty blocks (their transactions gone, or back in the mempool
// on Bitcoin and Litecoin), scanned, then the same transactions are mined
// back in a longer branch still (in the same blocks, reshuffled among
// them, or with one never returning) and scanned. When the chain has the
// same transactions at the same confirmation status as before, the books
// must be what they were (issue 21): only a payable whose payer changed
// while its payment was away may differ (the storefront was told).
func (r *run) roundTrip(n payment.Network, nd *node, a Action) {
	// Away and back, the scanner walks back depth+1 blocks: within the
	// safety depth.
	sd := int(safetyDepth[n]) - 1
	if sd < 1 || r.deep[n] {
		return // Solana scans finalized slots: no reorg within the safety depth
	}
	if !r.settle(n, "round trip: settle") {
		return
	}
	chain := nd.f.Chain()
	depth := min(1+a.A%sd, len(chain)-2)
	if depth < 1 {
		return
	}
	var blocks [][]chains.Transfer
	var txs []string
	for _, b := range chain[len(chain)-depth:] {
		blocks = append(blocks, b.Transfers)
		for _, t := range b.Transfers {
			r.disturb(t.TxID)
			txs = append(txs, t.TxID)
		}
	}
	mode := a.B % 3
	// The books are compared only when the same facts come back: some
	// transactions went away and all of them return (mode 2 keeps one
	// away).
	compare := len(txs) > 0 && mode != 2
	var before, away *books
	var err error
	if compare {
		if before, err = r.books(); err != nil {
			r.violate("harness", "books: %v", err)
			return
		}
	}
	wait := hasMempool(n) && a.C%2 == 0
	nd.f.ReorgTo(depth, make([][]chains.Transfer, depth+1))
	if wait {
		for _, ts := range blocks {
			for _, t := range ts {
				nd.f.Broadcast(t)
				nd.broadcast[t.TxID] = true
			}
		}
	}
	r.scanNet(n, "round trip: away")
	if compare {
		if away, err = r.books(); err != nil {
			r.violate("harness", "books: %v", err)
			return
		}
	}
	back := make([][]chains.Transfer, len(blocks), len(blocks)+2)
	copy(back, blocks)
	gone := ""
	switch mode {
	case 1: // the same transactions in other blocks of the branch
		rng := rand.New(rand.NewPCG(uint64(a.D), 21))
		byTx, order := map[string][]chains.Transfer{}, []string{}
		for _, ts := range blocks {
			for _, t := range ts {
				if _, ok := byTx[t.TxID]; !ok {
					order = append(order, t.TxID)
				}
				byTx[t.TxID] = append(byTx[t.TxID], t)
			}
		}
		back = make([][]chains.Transfer, len(blocks), len(blocks)+2)
		for _, id := range order {
			k := rng.IntN(len(back))
			back[k] = append(back[k], byTx[id]...)
		}
	case 2: // one transaction never returns
		if len(txs) > 0 {
			gone = txs[a.D%len(txs)]
			for i, ts := range back {
				var keep []chains.Transfer
				for _, t := range ts {
					if t.TxID != gone {
						keep = append(keep, t)
					}
				}
				back[i] = keep
			}
			nd.f.Drop(gone)
		}
	}
	nd.f.ReorgTo(depth+1, append(back, nil, nil))
	r.scanNet(n, "round trip: back")
	names := []string{"same blocks", "reshuffled", "one never returns"}
	r.logf("%s round trip depth %d (%s, in the mempool meanwhile: %v): %d transactions -> tip %d", n, depth, names[mode], wait, len(txs), nd.f.TipHeight())
	if !compare || gone != "" {
		return // not the same facts
	}
	after, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	// The same facts: every transfer with the confirmation status it had
	// (the new branch is longer: one that was confirming may be confirmed).
	for id, s := range before.transfers {
		if after.transfers[id] == "" || status(s) != status(after.transfers[id]) {
			r.logf("     not the same facts: transfer %s was %q, is %q", id, s, after.transfers[id])
			return
		}
	}
	skip := before.payerChanged(away)
	if d := before.diff(after, skip); d != "" {
		r.violate(Invariants[invRoundTrip], "%s round trip of depth %d (%s): %s", n, depth, names[mode], d)
	}
}

// status is the last word of a books transfer line: its status.
func status(line string) string {
	for i := len(line) - 1; i >= 0; i-- {
		if line[i] == ' ' {
			return line[i+1:]
		}
	}
	return line
}

// rebuild checks, at the end of a history, that the books are a function
// of the facts: with every network settled and the deadline sweep run, it
// reads the books, forgets everything decided (transfers' classes,
// settled parts and notifications; intents' statuses and sums), scans
// every chain again from its first height, decides every payable and
// compares. Its scanners are new ones (restarted) with the largest
// catch-up window, rebuildWindow: the window is not a fact, so the books
// must not depend on it either. What it keeps are the facts the chain cannot give:
// intents and payables (with who paid a payable so far, and when an intent
// was first paid: what the storefront was told), when each transfer was
// first seen and recorded, finance's decisions and the ledger.
func (r *run) rebuild() {
	for _, n := range r.h.Nets {
		r.nodes[n].window = rebuildWindow
		r.newScanner(n)
		if !r.settle(n, "rebuild: settle") {
			return
		}
	}
	// Any config validation accepts confirms every payment: with as many
	// blocks mined as the deepest requirement (finality included), no
	// transfer on the chain is still confirming.
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT network, txid, idx, confirmations_required FROM transfers WHERE status = 'confirming'`)
	if err != nil {
		r.violate("harness", "transfers: %v", err)
		return
	}
	for rows.Next() {
		var n, txid string
		var idx int64
		var req int
		if rows.Scan(&n, &txid, &idx, &req) == nil {
			r.violate(Invariants[invConfirm], "%s transfer %s:%d (%d confirmations required) is still confirming %d blocks later",
				n, r.txName(txid), idx, req, r.deepest(payment.Network(n))+1)
		}
	}
	rows.Close()
	if len(r.viol) > 0 {
		return
	}
	if _, err := r.w.e.Service.Sweep(r.ctx); err != nil {
		r.violate("no scanner halts on business state", "deadline sweep failed: %v", err)
		return
	}
	before, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	pool := r.w.e.Store.Pool()
	// Where each transfer is on its chain stays: forgetting it would make
	// the chains come back one after the other, a round trip across
	// networks in which another intent may rightly take the payable (the
	// latch of docs/behaviour.md invariant 6). The rescan reads it again.
	forget := `UPDATE transfers SET notified_class = NULL,
			classification = CASE WHEN intent_id IS NULL THEN classification ELSE 'partial' END
		WHERE classification <> 'unexplained';
		UPDATE intents SET status = CASE WHEN superseded_by IS NOT NULL THEN 'superseded' ELSE 'awaiting_payment' END,
			received = 0, confirmed_sum = 0, overpaid = FALSE, late = FALSE`
	if r.w.hasSettled {
		forget += `; UPDATE transfers SET settled = 0`
	}
	if _, err := pool.Exec(r.ctx, forget); err != nil {
		r.violate("harness", "forget decisions: %v", err)
		return
	}
	for _, n := range r.h.Nets {
		if err := r.w.e.Store.RequestRescan(r.ctx, string(n), 1, r.w.e.Clock.Now()); err != nil {
			r.violate("harness", "rescan: %v", err)
			return
		}
		r.scanNet(n, "rebuild")
	}
	if _, err := r.w.e.Service.Sweep(r.ctx); err != nil {
		r.violate("no scanner halts on business state", "deadline sweep failed: %v", err)
		return
	}
	if err := r.decideAll(r.ctx); err != nil {
		r.violate("harness", "decide every payable: %v", err)
		return
	}
	after, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	r.logf("rebuild: every chain scanned again from its first height, every payable decided")
	if d := before.diff(after, nil); d != "" {
		r.violate(Invariants[invRebuild], "%s", d)
	}
	// The statuses were forgotten behind the events' back: the lifecycle
	// and event checks restart from what the rebuild decided.
	r.rebuilt = true
}

// decideAll decides every intent's payable again, as the scanner sink
// does after a block.
func (r *run) decideAll(ctx context.Context) error {
	rows, err := r.w.e.Store.Pool().Query(ctx, `SELECT id FROM intents ORDER BY id`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	return r.w.decideAll(ctx, ids)
}

// checkUpToDate decides every payable again and checks that nothing
// changes (no book, no event): every decision already follows from the
// facts as they are (a finance decision that did not decide its intent
// again at once is found here).
func (r *run) checkUpToDate(why string) {
	// Deadlines that passed since the last sweep are the sweep's to apply.
	if _, err := r.w.e.Service.Sweep(r.ctx); err != nil {
		r.violate("no scanner halts on business state", "deadline sweep failed: %v", err)
		return
	}
	before, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	var seq int64
	_ = r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq)
	if err := r.decideAll(r.ctx); err != nil {
		r.violate("harness", "decide every payable: %v", err)
		return
	}
	after, err := r.books()
	if err != nil {
		r.violate("harness", "books: %v", err)
		return
	}
	if d := before.diff(after, nil); d != "" {
		r.violate(Invariants[invUpToDate], "%s: %s", why, d)
		return
	}
	var n int64
	_ = r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT count(*) FROM events WHERE seq > $1`, seq).Scan(&n)
	if n > 0 {
		r.violate(Invariants[invUpToDate], "%s: deciding again wrote %d events", why, n)
	}
}
