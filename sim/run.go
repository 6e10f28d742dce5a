package sim

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
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
	if !r.start() {
		return r.viol, r.trace
	}
	for i, a := range h.Actions {
		r.step, r.orig = i+1, a.I
		r.exec(a)
		if len(r.viol) == 0 {
			r.check()
		}
		if len(r.viol) > 0 && r.stopAfter {
			break
		}
	}
	if len(r.viol) == 0 && rebuildEnabled {
		r.step = len(h.Actions) + 1
		r.rebuild()
		if len(r.viol) == 0 {
			r.check()
		}
	}
	_, _ = w.e.Store.Pool().Exec(r.ctx, `DELETE FROM sim_faults`)
	return r.viol, r.trace
}

func newRun(w *world, h History) *run {
	r := &run{w: w, h: h, ctx: context.Background(), nodes: map[payment.Network]*node{}, scan: map[payment.Network]*chains.Scanner{},
		deep: map[payment.Network]bool{}, txs: map[string]*txRec{}, res: map[string]resolvedRec{}, covered: map[string]*big.Int{}, stopAfter: true}
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
		r.newScanner(n)
		r.scanNet(n, "start")
	}
	r.check()
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
	r.scan[n] = r.w.e.NewScanner(n, r.source(n))
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

// scanNet steps n's scanner until it is caught up, as Scanner.Run does
// (health recorded after each step), stopping at the first error; an error
// without an injected cause is a halted scanner.
func (r *run) scanNet(n payment.Network, why string) {
	sc := r.scan[n]
	nd := r.nodes[n]
	for i := 0; i < 60; i++ {
		nd.cap = -1
		if cur, err := r.w.e.Sink.Cursor(r.ctx, n); err == nil {
			nd.cap = cur.Height + parallel
		}
		caughtUp, err := sc.Step(r.ctx)
		h := chains.Health{Healthy: err == nil}
		if err != nil {
			h.LastError = err.Error()
			if errors.Is(err, chains.ErrDeepReorg) {
				h.Critical = err.Error()
			}
		}
		if herr := r.w.e.Sink.SetHealth(r.ctx, n, h); herr != nil && !strings.Contains(herr.Error(), killMessage) {
			r.violate("harness", "set health %s: %v", n, herr)
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
			return
		}
	}
	r.violate("no scanner halts on business state", "%s scanner not caught up after 60 steps", n)
}

func (r *run) cursorString(n payment.Network) string {
	c, err := r.w.e.Sink.Cursor(r.ctx, n)
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

var orderUSD = []string{"100.00", "37.50", "250.00", "0.02"}
var topupUSD = []string{"100.00", "500.00"}

func (r *run) exec(a Action) {
	n := r.h.Nets[a.Net%len(r.h.Nets)]
	nd := r.nodes[n]
	switch a.Kind {
	case Create:
		r.create(n, a)
	case Replay:
		r.replay(a)
	case Report:
		if in := r.pick(a.A); in != nil {
			st, body := r.mutate("POST", "/v1/intents/"+in.id+"/report", "storefront", nil)
			r.logf("report %s (%s %s) -> %d %s", in.id, in.kind, in.ref, st, brief(body))
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
	}
}

func (r *run) restartService() {
	r.w.e.RestartService()
	for _, n := range r.h.Nets {
		r.newScanner(n)
	}
}

// fingerprint is what any change of state moves: the last event, and the
// rows a request may write.
const fingerprint = `SELECT (SELECT coalesce(max(seq), 0) FROM events) || '/' || (SELECT count(*) FROM ledger_entries) || '/' ||
	(SELECT count(*) FROM intents) || '/' || (SELECT count(*) FROM payables) || '/' || (SELECT count(*) FROM resolutions) || '/' ||
	(SELECT count(*) FROM transfers WHERE credited) || '/' || (SELECT coalesce(sum(coalesce(rescan_from, -1)), 0) FROM cursors)`

// mutate sends a request that may change state; a refused one (4xx, 5xx)
// must change nothing (DESIGN.md invariant 4).
func (r *run) mutate(method, path, scope string, body any, headers ...string) (int, []byte) {
	var before string
	_ = r.w.e.Store.Pool().QueryRow(r.ctx, fingerprint).Scan(&before)
	st, resp := r.w.do(method, path, scope, body, headers...)
	if st >= 400 {
		var after string
		_ = r.w.e.Store.Pool().QueryRow(r.ctx, fingerprint).Scan(&after)
		if after != before {
			r.violate(Invariants[15], "%s %s -> %d %s changed %s into %s", method, path, st, brief(resp), before, after)
		}
	}
	return st, resp
}

func brief(b []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
		Code   string `json:"code"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(b, &e)
	switch {
	case e.Error.Code != "":
		return e.Error.Code
	case e.Code != "":
		return e.Code
	case e.Status != "":
		return e.Status
	}
	return ""
}

func (r *run) create(n payment.Network, a Action) {
	var methods []payment.MethodInfo
	for _, m := range payment.Methods {
		if m.Network == n {
			methods = append(methods, m)
		}
	}
	m := methods[a.B%len(methods)]
	ref := a.C % 3
	body := map[string]string{"method": string(m.Method)}
	if a.A%3 == 0 {
		body["kind"], body["reference"], body["account"], body["amount_usd"] = "topup", fmt.Sprintf("top-%d", ref), fmt.Sprintf("acct-%d", ref%2), topupUSD[ref%2]
	} else {
		body["kind"], body["reference"], body["account"], body["amount_usd"] = "order", fmt.Sprintf("ord-%d", ref), fmt.Sprintf("acct-%d", ref%2), orderUSD[ref%len(orderUSD)]
		if a.D%7 == 0 {
			body["amount_usd"] = "13.00" // a conflicting amount
		}
	}
	raw, _ := json.Marshal(body)
	var hdr []string
	key := ""
	if a.D%2 == 0 {
		key = fmt.Sprintf("c-%d-%d", r.h.Seed, r.step)
		hdr = []string{"Idempotency-Key", key}
	}
	st, resp := r.mutate("POST", "/v1/intents", "storefront", raw, hdr...)
	r.logf("create %s %s %s %s USD -> %d %s", body["kind"], body["reference"], m.Method, body["amount_usd"], st, brief(resp))
	if key != "" && st < 300 {
		r.idem = append(r.idem, idemRec{method: "POST", path: "/v1/intents", key: key, body: raw, status: st, resp: resp, network: n})
	}
	if st == 201 {
		r.addIntent(resp)
	}
}

func (r *run) addIntent(resp []byte) {
	var v views.Intent
	if err := json.Unmarshal(resp, &v); err != nil {
		r.violate("harness", "intent view: %v", err)
		return
	}
	n := payment.Network(v.Network)
	ad, err := addresses.ParseAddress(n, r.w.e.Config.Networks[v.Network].Chain, v.Address)
	if err != nil {
		r.violate("harness", "parse %s: %v", v.Address, err)
		return
	}
	amt, _ := new(big.Int).SetString(v.AmountBaseUnits, 10)
	in := &intentRec{id: v.ID, kind: string(v.Kind), ref: v.Reference, method: v.Method, address: v.Address, network: n,
		asset: payment.Asset(v.Asset), amount: amt, key: ad.Key}
	if v.Account != nil {
		in.account = *v.Account
	}
	if r.w.ours[n] == nil {
		r.w.ours[n] = map[string]bool{}
	}
	r.w.ours[n][hex.EncodeToString(ad.Key)] = true
	r.intents = append(r.intents, in)
	r.logf("     = intent %s %s amount %s", in.id, in.address, in.amount)
}

func (r *run) renew(in *intentRec, a Action) {
	var hdr []string
	key := ""
	if a.B%2 == 0 {
		key = fmt.Sprintf("r-%d-%d", r.h.Seed, r.step)
		hdr = []string{"Idempotency-Key", key}
	}
	path := "/v1/intents/" + in.id + "/renew"
	st, resp := r.mutate("POST", path, "storefront", nil, hdr...)
	r.logf("renew %s (%s) -> %d %s", in.id, in.ref, st, brief(resp))
	if key != "" && st < 300 {
		r.idem = append(r.idem, idemRec{method: "POST", path: path, key: key, status: st, resp: resp, network: in.network})
	}
	if st == 201 {
		r.addIntent(resp)
	}
}

// replay sends a completed idempotent request again, the node of its
// network down half of the time: the stored response must come back.
func (r *run) replay(a Action) {
	if len(r.idem) == 0 {
		return
	}
	q := r.idem[a.A%len(r.idem)]
	outage := a.B%2 == 0 && r.nodes[q.network] != nil
	if outage {
		r.nodes[q.network].f.FailTip(errInjected)
		r.scanNet(q.network, "outage before replay")
	}
	st, resp := r.w.do(q.method, q.path, "storefront", q.body, "Idempotency-Key", q.key)
	r.logf("replay %s %s key %s (outage %v) -> %d %s", q.method, q.path, q.key, outage, st, brief(resp))
	if st != q.status || string(resp) != string(q.resp) {
		r.violate("an idempotent replay returns the stored response", "%s %s key %s first %d %s, replay %d %s",
			q.method, q.path, q.key, q.status, shorten(string(q.resp)), st, shorten(string(resp)))
	}
	if outage {
		r.nodes[q.network].f.FailTip(nil)
	}
}

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
		cur, err := r.w.e.Sink.Cursor(r.ctx, n)
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

// debit pays an order from a balance; a.C%3 == 0 sends two debits at once.
func (r *run) debit(a Action) {
	ref := a.B % 3
	account := fmt.Sprintf("acct-%d", ref%2)
	usd := orderUSD[ref%len(orderUSD)]
	one := func(reference, amount string, key string) (int, []byte) {
		body, _ := json.Marshal(finance.DebitRequest{Reference: reference, AmountUSD: amount})
		return r.mutate("POST", "/v1/accounts/"+account+"/debits", "storefront", body, "Idempotency-Key", key)
	}
	// Two at once: the other one may change state while one is refused.
	raw := func(reference, amount string, key string) (int, []byte) {
		body, _ := json.Marshal(finance.DebitRequest{Reference: reference, AmountUSD: amount})
		return r.w.do("POST", "/v1/accounts/"+account+"/debits", "storefront", body, "Idempotency-Key", key)
	}
	covered := r.coveredOrders()
	reference := fmt.Sprintf("ord-%d", ref)
	if a.C%3 != 0 {
		key := fmt.Sprintf("d-%d-%d", r.h.Seed, r.step)
		st, resp := one(reference, usd, key)
		r.logf("debit %s %s USD from %s -> %d %s", reference, usd, account, st, brief(resp))
		r.checkDebit(reference, covered, st)
		if st == 201 {
			r.checkUpToDate("after a debit")
		}
		if st < 300 {
			body, _ := json.Marshal(finance.DebitRequest{Reference: reference, AmountUSD: usd})
			r.idem = append(r.idem, idemRec{method: "POST", path: "/v1/accounts/" + account + "/debits", key: key, body: body, status: st, resp: resp})
		}
		return
	}
	other := fmt.Sprintf("ord-%d", (ref+2)%3)
	if a.D%2 == 0 {
		other = reference
	}
	var wg sync.WaitGroup
	var st [2]int
	var resp [2][]byte
	refs := [2]string{reference, other}
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st[i], resp[i] = raw(refs[i], usd, fmt.Sprintf("d-%d-%d-%d", r.h.Seed, r.step, i))
		}()
	}
	wg.Wait()
	r.logf("two debits at once from %s: %s -> %d %s, %s -> %d %s", account, refs[0], st[0], brief(resp[0]), refs[1], st[1], brief(resp[1]))
	for i := range 2 {
		r.checkDebit(refs[i], covered, st[i])
	}
	if refs[0] == refs[1] && st[0] == 201 && st[1] == 201 {
		r.violate("a payable is paid at most once", "two concurrent debits of %s both got 201", refs[0])
	}
}

// coveredOrders returns, by order reference, an intent that is detected
// with a counting payment that covers it.
func (r *run) coveredOrders() map[string]string {
	out := map[string]string{}
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT p.reference, i.id FROM intents i JOIN payables p ON p.id = i.payable_id
		WHERE p.kind = 'order' AND i.status = 'detected' AND i.received >= i.amount - i.tolerance`)
	if err != nil {
		r.violate("harness", "covered orders: %v", err)
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var ref, id string
		if rows.Scan(&ref, &id) == nil {
			out[ref] = id
		}
	}
	return out
}

func (r *run) checkDebit(reference string, covered map[string]string, st int) {
	if id, ok := covered[reference]; ok && st == 201 {
		r.violate("a debit is refused while a detected payment covers the order", "debit of %s got 201 while intent %s is detected with a covering payment", reference, id)
	}
}

func (r *run) resolve(a Action) {
	type cand struct{ id, class, status, intent string }
	var cs []cand
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT id, classification, status, coalesce(intent_id, '') FROM transfers ORDER BY network, txid, idx`)
	if err != nil {
		r.violate("harness", "transfers: %v", err)
		return
	}
	for rows.Next() {
		var c cand
		if rows.Scan(&c.id, &c.class, &c.status, &c.intent) == nil {
			cs = append(cs, c)
		}
	}
	rows.Close()
	if len(cs) == 0 {
		return
	}
	// Mostly inbox items, sometimes anything (settles, orphaned).
	var pickFrom []cand
	for _, c := range cs {
		if c.class != "settles" && c.status != "orphaned" && r.res[c.id].action == "" {
			pickFrom = append(pickFrom, c)
		}
	}
	if len(pickFrom) == 0 || a.D%5 == 0 {
		pickFrom = cs
	}
	// Sometimes an overpayment (its surplus) or a late payment (credited
	// to its own intent): the decisions a round trip must give back.
	prefer := map[int]string{0: "overpaid", 1: "late"}[a.C%5]
	if prefer != "" {
		var some []cand
		for _, c := range pickFrom {
			if c.class == prefer {
				some = append(some, c)
			}
		}
		if len(some) > 0 {
			pickFrom = some
		}
	}
	c := pickFrom[a.A%len(pickFrom)]
	req := map[string]string{"note": "sim decision"}
	actions := []string{finance.ActionCreditIntent, finance.ActionCreditAccount, finance.ActionRefunded, finance.ActionIgnore}
	req["action"] = actions[a.B%4]
	if prefer == "late" && c.class == "late" && a.B%2 == 0 {
		req["action"] = finance.ActionCreditIntent
		req["intent_id"] = c.intent
	}
	switch req["action"] {
	case finance.ActionCreditIntent:
		if req["intent_id"] != "" {
			break
		}
		// Its own intent, another intent of the same payable, or any.
		target := r.pick(a.C)
		var own *intentRec
		for _, in := range r.intents {
			if in.id == c.intent {
				own = in
			}
		}
		switch {
		case own != nil && a.C%3 == 0:
			req["intent_id"] = own.id
		case own != nil && a.C%3 == 1:
			for _, in := range r.intents {
				if in.ref == own.ref && in.kind == own.kind && in.id != own.id {
					req["intent_id"] = in.id
				}
			}
		}
		if req["intent_id"] == "" && target != nil {
			req["intent_id"] = target.id
		}
	case finance.ActionCreditAccount:
		req["account"] = fmt.Sprintf("acct-%d", a.C%2)
	case finance.ActionRefunded:
		req["refund_txid"] = chainstest.TxID(fmt.Sprintf("refund-%d", a.C))
	}
	switch a.D % 7 {
	case 1:
		delete(req, "note")
	case 2:
		req["action"] = "pay_back"
	}
	before := c.class
	status := c.status
	open, err := r.unresolvedNow(c.id)
	if err != nil {
		r.violate("harness", "unresolved part of %s: %v", c.id, err)
		return
	}
	st, resp := r.mutate("POST", "/v1/transfers/"+c.id+"/resolve", "finance", req)
	r.logf("resolve %s (%s, %s) %s %s -> %d %s", c.id, c.class, c.status, req["action"], req["intent_id"]+req["account"], st, brief(resp))
	if st == 200 {
		if req["action"] != finance.ActionCreditIntent {
			if r.covered[c.id] == nil {
				r.covered[c.id] = new(big.Int)
			}
			r.covered[c.id].Add(r.covered[c.id], open)
		}
		r.checkUpToDate("after a finance decision")
		r.res[c.id] = resolvedRec{action: req["action"], classBefore: before, from: c.intent, intent: req["intent_id"]}
		if req["action"] == finance.ActionCreditAccount && status != "confirmed" {
			r.violate("an account is credited only for confirmed money", "credit_account of transfer %s accepted while it is %s", c.id, status)
		}
	}
}

func (r *run) rescan(n payment.Network, a Action) {
	cur, err := r.w.e.Sink.Cursor(r.ctx, n)
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
