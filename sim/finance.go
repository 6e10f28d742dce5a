package sim

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// debit pays an order from a balance; a.C%3 == 0 sends two debits at once.
func (r *run) debit(a Action) {
	ref := a.B % 3
	account := fmt.Sprintf("acct-%d", ref%2)
	usd := orderUSD[ref%len(orderUSD)]
	shop := a.shop()
	scope, as := r.as(shop, "storefront")
	one := func(reference, amount string, key string) (int, []byte) {
		body, _ := json.Marshal(finance.DebitRequest{Reference: reference, AmountUSD: amount})
		return r.mutate("POST", "/v1/accounts/"+account+"/debits", scope, body, append(as, "Idempotency-Key", key)...)
	}
	// Two at once: the other one may change state while one is refused.
	raw := func(reference, amount string, key string) (int, []byte) {
		body, _ := json.Marshal(finance.DebitRequest{Reference: reference, AmountUSD: amount})
		return r.w.do("POST", "/v1/accounts/"+account+"/debits", scope, body, append(as, "Idempotency-Key", key)...)
	}
	covered := r.coveredOrders(shop)
	reference := fmt.Sprintf("ord-%d", ref)
	if a.C%3 != 0 {
		key := fmt.Sprintf("d-%d-%d", r.h.Seed, r.step)
		before := r.payableOf(shop, "order", reference)
		st, resp := one(reference, usd, key)
		r.checkDebitNamespace(shop, reference, account, usd, before, st, resp)
		r.logf("%sdebit %s %s USD from %s -> %d %s", shopTag(shop), reference, usd, account, st, brief(resp))
		r.checkDebit(reference, covered, st)
		if st == 201 {
			r.checkUpToDate("after a debit")
		}
		if st < 300 {
			body, _ := json.Marshal(finance.DebitRequest{Reference: reference, AmountUSD: usd})
			r.idem = append(r.idem, idemRec{method: "POST", path: "/v1/accounts/" + account + "/debits", key: key, body: body, status: st, resp: resp, scope: scope, as: as})
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
	r.logf("%stwo debits at once from %s: %s -> %d %s, %s -> %d %s", shopTag(shop), account, refs[0], st[0], brief(resp[0]), refs[1], st[1], brief(resp[1]))
	for i := range 2 {
		r.checkDebit(refs[i], covered, st[i])
	}
	if refs[0] == refs[1] && st[0] == 201 && st[1] == 201 {
		r.violate("a payable is paid at most once", "two concurrent debits of %s both got 201", refs[0])
	}
}

// coveredOrders returns, by order reference, an intent that is detected
// with a counting payment that covers it.
func (r *run) coveredOrders(shop string) map[string]string {
	out := map[string]string{}
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT p.reference, i.id FROM intents i JOIN payables p ON p.id = i.payable_id
		WHERE p.kind = 'order' AND i.status = 'detected' AND i.received >= i.amount - i.tolerance AND p.store_id = $1`, store.StoreOr(shop))
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

// cand is a transfer a finance decision is made on.
type cand struct{ id, class, status, intent, shop string }

func (r *run) resolve(a Action) {
	var cs []cand
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT id, classification, status, coalesce(intent_id, ''), store_id FROM transfers ORDER BY network, txid, idx`)
	if err != nil {
		r.violate("harness", "transfers: %v", err)
		return
	}
	for rows.Next() {
		var c cand
		if rows.Scan(&c.id, &c.class, &c.status, &c.intent, &c.shop) == nil {
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
	var model creditModel
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
				if in.ref == own.ref && in.kind == own.kind && in.shop == own.shop && in.id != own.id {
					req["intent_id"] = in.id
				}
			}
		}
		if req["intent_id"] == "" && target != nil {
			req["intent_id"] = target.id
		}
	case finance.ActionCreditAccount:
		req["account"] = fmt.Sprintf("acct-%d", a.C%2)
		if model, err = r.creditModelOf(c.id); err != nil {
			r.violate("harness", "credit model of %s: %v", c.id, err)
			return
		}
		if rate := sentRate(a, model); rate != "" {
			req["usd_per_unit"] = rate
		}
	case finance.ActionRefunded:
		req["refund_txid"] = chainstest.TxID(fmt.Sprintf("refund-%d", a.C))
	}
	switch a.D % 7 {
	case 1:
		delete(req, "note")
	case 2:
		req["action"] = "pay_back"
	}
	r.across = (a.C>>13)%4 == 0
	r.submitResolve(c, req, model)
	r.across = false
}

// submitResolve sends finance's decision req on transfer c and checks the
// answer (model: what a credit_account must credit).
func (r *run) submitResolve(c cand, req map[string]string, model creditModel) {
	before := c.class
	status := c.status
	open, err := r.unresolvedNow(c.id)
	if err != nil {
		r.violate("harness", "unresolved part of %s: %v", c.id, err)
		return
	}
	shop := c.shop
	if r.across {
		// Finance acting for the other store (an every-store key naming
		// it): refused, or in the transfer's store.
		shop = shops[0]
		if store.StoreOr(c.shop) == shops[0] {
			shop = shops[1]
		}
	}
	scope, as := r.as(shop, "finance")
	st, resp := r.mutate("POST", "/v1/transfers/"+c.id+"/resolve", scope, req, as...)
	r.checkAcross(c, req, shop, st, resp)
	r.logf("%sresolve %s (%s, %s) %s %s %s -> %d %s", shopTag(shop), c.id, c.class, c.status, req["action"], req["intent_id"]+req["account"], req["usd_per_unit"], st, brief(resp))
	if req["action"] == finance.ActionCreditAccount && req["note"] != "" {
		r.checkCreditAt(c.id, model, req["usd_per_unit"], open, st, resp)
	}
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

// lateCredit is finance's credit_account on a late transfer while quotes
// moved: the clock passes an intent's deadline (the quotes of the new time
// moved), its amount arrives then, is mined deep enough and scanned, and
// finance credits it to an account, with or without a usd_per_unit (the
// quote of its time, within the bound of it, or the expired lock).
func (r *run) lateCredit(a Action) {
	in := r.pick(a.A)
	if in == nil || r.nodes[in.network] == nil {
		return
	}
	n, nd := in.network, r.nodes[in.network]
	var expires time.Time
	if err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT expires_at FROM intents WHERE id = $1`, in.id).Scan(&expires); err != nil {
		r.violate("harness", "deadline of %s: %v", in.id, err)
		return
	}
	d := time.Duration(1+a.C%25) * time.Minute
	if now := r.w.e.Clock.Now(); now.Before(expires) {
		d += expires.Sub(now)
	}
	r.w.e.Clock.Advance(d)
	r.logf("clock +%s -> %s, past the deadline of %s", d.Round(time.Second), r.w.e.Clock.Now().Format("15:04"), in.id)
	r.moveQuotes(a)
	txid := r.newTx(n)
	idx := chains.NativeIndex
	switch {
	case hasMempool(n):
		idx = 0
	case n == payment.Solana:
		idx = 1
	case in.asset != payment.Native:
		idx = int64(a.D % 5)
	}
	t := chains.Transfer{TxID: txid, Index: idx, Asset: in.asset, Key: in.key, Address: in.address, Amount: new(big.Int).Set(in.amount)}
	r.txs[txid].transfers = []chains.Transfer{t}
	nd.f.Send(t.TxID, t.Index, t.Asset, t.Key, t.Address, t.Amount)
	nd.f.Mine(int(safetyDepth[n]) + 4)
	r.logf("%s late pay %s (%s) %s %s, tx %s, mined -> tip %d", n, in.id, in.ref, t.Amount, t.Asset, r.txName(txid), nd.f.TipHeight())
	r.scanNet(n, "late credit")
	var c cand
	err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT id, classification, status, coalesce(intent_id, ''), store_id FROM transfers
		WHERE network = $1 AND txid = $2`, string(n), txid).Scan(&c.id, &c.class, &c.status, &c.intent, &c.shop)
	if err != nil {
		// Not recorded (a fault or an outage stopped the scan): nothing to decide.
		r.logf("late transfer %s not recorded: %v", r.txName(txid), err)
		return
	}
	model, err := r.creditModelOf(c.id)
	if err != nil {
		r.violate("harness", "credit model of %s: %v", c.id, err)
		return
	}
	req := map[string]string{"note": "late, sim decision", "action": finance.ActionCreditAccount, "account": fmt.Sprintf("acct-%d", a.B%2)}
	if rate := sentRate(Action{D: 3 + a.D%4}, model); rate != "" {
		req["usd_per_unit"] = rate
	}
	r.submitResolve(c, req, model)
}

// moveQuotes records, at the clock's new time, a quote of every symbol of
// the history's methods that moved from the static rate the intents lock
// (×0.5, ×0.8, ×1, ×1.25 or ×2), as the daemon's quote recorder would
// have: the quote of a transfer's time is then not the one its intent
// locked, and a late transfer's credit_account must take it.
func (r *run) moveQuotes(a Action) {
	factors := [][2]int64{{1, 2}, {4, 5}, {1, 1}, {5, 4}, {2, 1}}
	f := factors[a.B%len(factors)]
	now := r.w.e.Clock.Now().UTC().Truncate(time.Microsecond)
	var moved []string
	for _, m := range payment.Methods {
		if !slices.Contains(r.h.Nets, m.Network) {
			continue
		}
		base, ok := new(big.Rat).SetString(paywatchtest.Prices[m.Symbol])
		if !ok {
			continue
		}
		q := new(big.Rat).Mul(base, big.NewRat(f[0], f[1])).FloatString(6)
		err := r.w.e.Store.RecordQuote(r.ctx, store.RateQuote{Symbol: m.Symbol, At: now, USDPerUnit: q, Sources: []string{"sim"}})
		if err != nil {
			r.violate("harness", "record quote %s: %v", m.Symbol, err)
			return
		}
		moved = append(moved, m.Symbol+"="+q)
	}
	r.logf("quotes at %s: %s", now.Format("15:04"), strings.Join(moved, " "))
}

// creditModel is what the simulator expects of a credit_account of a
// transfer, from the facts: the intent's lock when the transfer is in its
// asset and was first seen by its deadline, else the quote of the
// transfer's time (the recorded quote nearest its first sighting within
// the rate book's max age, or the book's static quote when the decision
// is that recent; "" when there is none).
type creditModel struct {
	locked bool
	// lockRate is the rate the transfer's intent locked (also when the
	// transfer came late and the lock no longer holds).
	lockRate string
	quote    string
	decimals int
}

func (r *run) creditModelOf(id string) (creditModel, error) {
	var m creditModel
	var network, asset, inAsset, inRate string
	var firstSeen time.Time
	var expires *time.Time
	err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT t.network, t.asset, t.first_seen_at, coalesce(i.asset, ''), coalesce(i.rate::text, ''), i.expires_at
		FROM transfers t LEFT JOIN intents i ON i.id = t.intent_id WHERE t.id = $1`, id).Scan(&network, &asset, &firstSeen, &inAsset, &inRate, &expires)
	if err != nil {
		return m, err
	}
	m.decimals = views.Decimals(network, asset)
	m.lockRate = inRate
	if expires != nil && inAsset == asset && inRate != "" && !firstSeen.After(*expires) {
		m.locked = true
		return m, nil
	}
	meth, ok := payment.MethodFor(payment.Network(network), payment.Asset(asset))
	if !ok {
		return m, nil
	}
	window := finance.BoundsOf(r.w.e.Config).Window
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT at, usd_per_unit::text FROM rate_quotes WHERE symbol = $1 ORDER BY at`, meth.Symbol)
	if err != nil {
		return m, err
	}
	defer rows.Close()
	best := time.Duration(-1)
	for rows.Next() {
		var at time.Time
		var q string
		if err := rows.Scan(&at, &q); err != nil {
			return m, err
		}
		// The nearest; of two as near, the earlier (ordered by at).
		if d := at.Sub(firstSeen).Abs(); d <= window && (best < 0 || d < best) {
			best, m.quote = d, q
		}
	}
	if err := rows.Err(); err != nil {
		return m, err
	}
	if m.quote == "" && r.w.e.Clock.Now().Sub(firstSeen).Abs() <= window {
		m.quote = paywatchtest.Prices[meth.Symbol]
	}
	return m, nil
}

// sentRate is the usd_per_unit the history sends with a credit_account
// (a.D%7 3 to 5), or "": the quote of the transfer's time, 1% off it
// (within the bound), or the rate the transfer's intent locked (twice the
// quote of its time when it has none).
func sentRate(a Action, m creditModel) string {
	switch a.D % 7 {
	case 3:
		return m.quote
	case 4:
		if q, ok := new(big.Rat).SetString(m.quote); ok {
			return q.Mul(q, big.NewRat(101, 100)).FloatString(6)
		}
	case 5:
		if m.lockRate != "" {
			return m.lockRate
		}
		if q, ok := new(big.Rat).SetString(m.quote); ok {
			return q.Mul(q, big.NewRat(2, 1)).FloatString(6)
		}
	}
	return ""
}

// checkCreditAt checks a credit_account's answer against the model:
// sent is the usd_per_unit sent ("" none), open what was unresolved.
func (r *run) checkCreditAt(id string, m creditModel, sent string, open *big.Int, st int, resp []byte) {
	if m.locked && sent != "" {
		if st == 200 {
			r.violate(Invariants[invCreditAt], "transfer %s's rate is locked at %s but usd_per_unit %s was accepted (it is replaced or used silently)", id, m.lockRate, sent)
		} else if st == 400 && !strings.Contains(string(resp), "usd_per_unit") {
			r.violate(Invariants[invCreditAt], "usd_per_unit %s for transfer %s, whose rate is locked: %d %s, want 400 naming usd_per_unit", sent, id, st, brief(resp))
		}
		return
	}
	if st != 200 {
		return
	}
	var v views.Transfer
	if err := json.Unmarshal(resp, &v); err != nil || v.Resolution == nil {
		r.violate("harness", "credit_account answer %s: %v", brief(resp), err)
		return
	}
	want := m.quote
	switch {
	case m.locked:
		want = m.lockRate
	case sent != "":
		if m.quote == "" || !within(sent, m.quote, finance.BoundsOf(r.w.e.Config).MaxDeviation) {
			r.violate(Invariants[invCreditAt], "transfer %s credited at usd_per_unit %s, which the quote of its time (%q) does not confirm, without an override", id, sent, m.quote)
			return
		}
		want = sent
	case m.quote == "":
		r.violate(Invariants[invCreditAt], "transfer %s has no locked rate and no quote of its time, but was credited at %s", id, v.Resolution.USDPerUnit)
		return
	}
	got, ok1 := new(big.Rat).SetString(v.Resolution.USDPerUnit)
	exp, ok2 := new(big.Rat).SetString(want)
	cents := views.USDValue(open, want, m.decimals)
	if !ok1 || !ok2 || got.Cmp(exp) != 0 || v.Resolution.AmountUSD != cents.String() {
		r.violate(Invariants[invCreditAt], "transfer %s (%s base units unresolved) credited %s USD at %s, want %s USD at %s (locked %v, sent %q, quote of its time %q)",
			id, open, v.Resolution.AmountUSD, v.Resolution.USDPerUnit, cents, want, m.locked, sent, m.quote)
	}
}

// within reports whether rate is within dev (a fraction) of ref.
func within(rate, ref string, dev *big.Rat) bool {
	x, ok1 := new(big.Rat).SetString(rate)
	q, ok2 := new(big.Rat).SetString(ref)
	if !ok1 || !ok2 {
		return false
	}
	d := new(big.Rat).Sub(x, q)
	return d.Abs(d).Cmp(new(big.Rat).Mul(dev, q)) <= 0
}
