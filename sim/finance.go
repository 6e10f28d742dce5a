package sim

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sync"

	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/finance"
)

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
