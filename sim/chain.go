package sim

import (
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/payment"
)

func (r *run) newTx(n payment.Network) string {
	r.txSeq++
	id := chainstest.TxID(fmt.Sprintf("sim-%d-%d", r.h.Seed, r.txSeq))
	if n == payment.Ethereum {
		id = "0x" + id
	}
	r.txs[id] = &txRec{network: n}
	return id
}

func (r *run) txName(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}

func (r *run) disturb(txid string) {
	if t := r.txs[txid]; t != nil {
		t.disturbed = true
	}
}

// otherAsset is another asset of the same network (wrong asset), or "".
func otherAsset(n payment.Network, a payment.Asset) payment.Asset {
	for _, m := range payment.Methods {
		if m.Network == n && m.Asset != a {
			return m.Asset
		}
	}
	return ""
}

func (r *run) pay(n payment.Network, a Action) {
	nd := r.nodes[n]
	// Mostly one of the last few intents of the network (so that payments
	// pile up on the same intents and payables), sometimes any.
	var on []*intentRec
	for _, c := range r.intents {
		if c.network == n {
			on = append(on, c)
		}
	}
	var in *intentRec
	if len(on) > 0 {
		if a.A%4 != 0 && len(on) > 3 {
			on = on[len(on)-3:]
		}
		in = on[a.A%len(on)]
	}
	var key []byte
	var address string
	asset := payment.Native
	amt := big.NewInt(int64(1000 + a.C%100000))
	mode := a.B % 9
	if in != nil && mode != 8 {
		key, address, asset = in.key, in.address, in.asset
		amt = new(big.Int).Set(in.amount)
	} else {
		// An address of ours that no intent has (unknown_address).
		var k []byte
		var ad string
		err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT a.key, a.address FROM free_addresses f JOIN addresses a USING (network, key)
			WHERE f.network = $1 ORDER BY f.lane = '', f.ord LIMIT 1 OFFSET $2`, string(n), a.C%5).Scan(&k, &ad)
		if err != nil {
			return
		}
		key, address = k, ad
		mode = 8
	}
	what := "exact"
	switch mode {
	case 1, 2: // partial
		amt.Div(amt, big.NewInt(2))
		what = "half"
	case 3:
		amt.Add(amt, new(big.Int).Div(amt, big.NewInt(10)))
		amt.Add(amt, big.NewInt(1))
		what = "over"
	case 4:
		amt.SetInt64(int64(1 + a.C%3))
		what = "dust"
	case 5:
		if o := otherAsset(n, asset); o != "" {
			asset = o
			what = "wrong asset " + string(o)
		}
	case 8:
		what = "to a free address"
	}
	txid := r.newTx(n)
	idx := chains.NativeIndex
	switch {
	case hasMempool(n):
		idx = int64(a.D % 2)
	case n == payment.Solana:
		idx = 1
	case asset != payment.Native:
		idx = int64(a.D % 5)
	}
	t := chains.Transfer{TxID: txid, Index: idx, Asset: asset, Key: key, Address: address, Amount: amt}
	ts := []chains.Transfer{t}
	if hasMempool(n) && a.D%5 == 0 {
		// Two outputs of one transaction to the same address.
		t2 := t
		t2.Index = 2
		t2.Amount = new(big.Int).Set(amt)
		ts = append(ts, t2)
		what += " twice in one tx"
	}
	r.txs[txid].transfers = ts
	direct := !hasMempool(n) || a.D%3 == 0
	for _, x := range ts {
		if direct {
			nd.f.Send(x.TxID, x.Index, x.Asset, x.Key, x.Address, x.Amount)
		} else {
			nd.f.Broadcast(x)
			nd.broadcast[x.TxID] = true
		}
	}
	target := "free address"
	if in != nil && mode != 8 {
		target = in.id + " (" + in.ref + ")"
	}
	how := "broadcast"
	if direct {
		how = "queued for the next block"
	}
	r.logf("%s pay %s %s %s: %s, tx %s %s", n, target, amt, asset, what, r.txName(txid), how)
}

func (r *run) reorg(n payment.Network, nd *node, a Action) {
	chain := nd.f.Chain()
	depth := 1 + a.A%int(safetyDepth[n]+1)
	if depth > len(chain)-2 {
		depth = len(chain) - 2
	}
	if depth < 1 {
		return
	}
	var dropped []chains.Transfer
	for _, b := range chain[len(chain)-depth:] {
		dropped = append(dropped, b.Transfers...)
		for _, t := range b.Transfers {
			r.disturb(t.TxID)
		}
	}
	length := depth + a.C%2
	blocks := make([][]chains.Transfer, length)
	mode := a.B % 3
	rng := rand.New(rand.NewPCG(uint64(a.D), 7))
	var back []chains.Transfer
	switch mode {
	case 1: // keep: back to the mempool (UTXO) or re-mined in the new branch's last block
		if hasMempool(n) {
			back = dropped
		} else {
			blocks[length-1] = dropped
		}
	case 2: // re-order: the same transactions in other blocks, other order
		byTx := map[string][]chains.Transfer{}
		var order []string
		for _, t := range dropped {
			if _, ok := byTx[t.TxID]; !ok {
				order = append(order, t.TxID)
			}
			byTx[t.TxID] = append(byTx[t.TxID], t)
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, id := range order {
			k := rng.IntN(length)
			blocks[k] = append(blocks[k], byTx[id]...)
		}
	}
	nd.f.ReorgTo(depth, blocks)
	for _, t := range back {
		nd.f.Broadcast(t)
		nd.broadcast[t.TxID] = true
	}
	if int64(depth) > safetyDepth[n] {
		r.deep[n] = true
	}
	names := []string{"drop", "keep", "re-order"}
	r.logf("%s reorg depth %d -> %d new blocks, %s %d transfers; tip %d", n, depth, length, names[mode], len(dropped), nd.f.TipHeight())
}

func (r *run) fault(n payment.Network, nd *node, a Action) {
	switch a.A % 3 {
	case 0:
		cur, err := r.cursorNow(n)
		if err != nil {
			return
		}
		for h := cur.Height + 1; h <= cur.Height+chains.Height(1+a.B%3); h++ {
			nd.f.FailBlock(h, errInjected)
		}
		r.logf("%s fetch errors at %d..%d", n, cur.Height+1, cur.Height+chains.Height(1+a.B%3))
	case 1:
		nd.f.FailTip(errInjected)
		r.logf("%s node down", n)
	default:
		for h := 0; h < len(nd.f.Chain())+8; h++ {
			nd.f.FailBlock(chains.Height(h), nil)
		}
		nd.f.FailTip(nil)
		nd.lag = 0
		r.logf("%s node healthy again", n)
	}
}

func (r *run) rescan(n payment.Network, a Action) {
	cur, err := r.cursorNow(n)
	if err != nil {
		return
	}
	var from int64
	valid := a.B%3 != 0
	if valid {
		from = int64(a.A) % int64(cur.Height+2)
	} else {
		from = int64(cur.Height) + 2 + int64(a.A%4)
		if a.A%2 == 0 {
			from = int64(r.nodes[n].f.TipHeight()) + 1 + int64(a.A%3)
		}
	}
	st, resp := r.mutate("POST", "/v1/networks/"+string(n)+"/rescan", "operator", map[string]int64{"from_height": from})
	r.logf("%s rescan from %d (scanned %d, tip %d) -> %d %s", n, from, cur.Height, r.nodes[n].f.TipHeight(), st, brief(resp))
	if st == 202 {
		r.deep[n] = false
	}
}

func (r *run) kill(n payment.Network, a Action) {
	batch := a.A%2 == 0
	if _, err := r.w.e.Store.Pool().Exec(r.ctx, `INSERT INTO sim_faults (network, batch_only) VALUES ($1, $2) ON CONFLICT DO NOTHING`, string(n), batch); err != nil {
		r.violate("harness", "arm kill: %v", err)
		return
	}
	r.logf("%s kill armed (batch only %v): scan", n, batch)
	r.scanNet(n, "kill")
	if _, err := r.w.e.Store.Pool().Exec(r.ctx, `DELETE FROM sim_faults`); err != nil {
		r.violate("harness", "disarm kill: %v", err)
	}
	r.restartService()
	r.logf("     process restarted")
}

// rescanAll replays every network from its first height and checks that
// the books come out the same (replays are harmless): faults cleared, every
// network caught up, a snapshot, a rescan from height 1, a snapshot.
func (r *run) rescanAll() {
	for _, n := range r.h.Nets {
		nd := r.nodes[n]
		for h := 0; h < len(nd.f.Chain())+8; h++ {
			nd.f.FailBlock(chains.Height(h), nil)
		}
		nd.f.FailTip(nil)
		nd.lag = 0
		// A block on top, so that a scanner sees a reorg at its tip.
		nd.f.Mine(1)
		if !r.deep[n] {
			r.scanNet(n, "catch up before the full rescan")
		}
	}
	// Deadlines passed since the last sweep would be applied by the
	// replay's re-decisions: sweep first.
	if _, err := r.w.e.Service.Sweep(r.ctx); err != nil {
		r.violate("no scanner halts on business state", "deadline sweep failed: %v", err)
	}
	before, err := r.snapshot()
	if err != nil {
		r.violate("harness", "snapshot: %v", err)
		return
	}
	for _, n := range r.h.Nets {
		if r.deep[n] {
			continue // stopped until an operator decides
		}
		if err := r.w.e.Store.RequestRescan(r.ctx, string(n), 1, r.w.e.Clock.Now()); err != nil {
			r.violate("harness", "rescan: %v", err)
			return
		}
		r.scanNet(n, "full rescan")
	}
	r.logf("full rescan from height 1 of %s", netsString(r.h.Nets))
	after, err := r.snapshot()
	if err != nil {
		r.violate("harness", "snapshot: %v", err)
		return
	}
	if d := diff(before, after); d != "" {
		r.violate("a full rescan reproduces the same state", "%s", d)
	}
	r.check()
}
