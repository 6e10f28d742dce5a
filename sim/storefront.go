package sim

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

var orderUSD = []string{"100.00", "37.50", "250.00", "0.02"}

var topupUSD = []string{"100.00", "500.00"}

// fingerprint is what any change of state moves: the last event, and the
// rows a request may write.
const fingerprint = `SELECT (SELECT coalesce(max(seq), 0) FROM events) || '/' || (SELECT count(*) FROM ledger_entries) || '/' ||
	(SELECT count(*) FROM intents) || '/' || (SELECT count(*) FROM payables) || '/' || (SELECT count(*) FROM resolutions) || '/' ||
	(SELECT count(*) FROM transfers WHERE credited) || '/' || (SELECT coalesce(sum(coalesce(rescan_from, -1)), 0) FROM cursors)`

// mutate sends a request that may change state; a refused one (4xx, 5xx)
// must change nothing (docs/behaviour.md invariant 4).
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
	shop := a.shop()
	open := r.openIntents(shop, body["kind"], body["reference"])
	before := r.payableOf(shop, body["kind"], body["reference"])
	scope, as := r.as(shop, "storefront")
	st, resp := r.mutate("POST", "/v1/intents", scope, raw, append(as, hdr...)...)
	r.logf("%screate %s %s %s %s USD -> %d %s", shopTag(shop), body["kind"], body["reference"], m.Method, body["amount_usd"], st, brief(resp))
	r.checkOpen(body["kind"], body["reference"], string(m.Method), open, st, resp)
	r.checkNamespace(shop, body, before, st, resp)
	if key != "" && st < 300 {
		r.idem = append(r.idem, idemRec{method: "POST", path: "/v1/intents", key: key, body: raw, status: st, resp: resp, network: n, scope: scope, as: as})
	}
	if st == 201 {
		r.addIntent(resp, shop)
	}
}

// openIntent is an intent open when a creation was asked: awaiting
// payment before its deadline, or detected.
type openIntent struct{ id, method string }

// openIntents reads the open intents of the payable (kind, ref) by the
// clock, as the daemon counts them.
func (r *run) openIntents(shop, kind, ref string) []openIntent {
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT i.id, i.method FROM intents i JOIN payables p ON p.id = i.payable_id
		WHERE p.kind = $1 AND p.reference = $2 AND (i.status = 'detected' OR (i.status = 'awaiting_payment' AND i.expires_at > $3))
			AND p.store_id = $4
		ORDER BY i.created_at, i.id`, kind, ref, r.w.e.Clock.Now(), store.StoreOr(shop))
	if err != nil {
		r.violate("harness", "open intents: %v", err)
		return nil
	}
	defer rows.Close()
	var out []openIntent
	for rows.Next() {
		var o openIntent
		if err := rows.Scan(&o.id, &o.method); err != nil {
			r.violate("harness", "open intents: %v", err)
			return nil
		}
		out = append(out, o)
	}
	return out
}

// checkOpen checks a creation's or renewal's answer against the payable's open intents
// before it (issue 22, item 5): an open intent of the method comes back as
// 200, a 201 is only for a method none is open for, and 409
// too_many_open_intents only with as many open as the cap.
func (r *run) checkOpen(kind, ref, method string, open []openIntent, st int, resp []byte) {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(resp, &v)
	same := ""
	for _, o := range open {
		if o.method == method {
			same = o.id
			break
		}
	}
	limit := r.w.e.Config.Limits.OpenIntentsPerPayable
	switch {
	case st == 201 && same != "":
		r.violate(Invariants[invOpen], "%s %s %s created %s while %s of that method was open", kind, ref, method, v.ID, same)
	case st == 201 && limit > 0 && len(open) >= limit:
		r.violate(Invariants[invOpen], "%s %s %s created %s with %d open intents, the cap is %d", kind, ref, method, v.ID, len(open), limit)
	case st == 200 && v.ID != same:
		r.violate(Invariants[invOpen], "%s %s %s answered 200 with %q, the open intent of the method is %q", kind, ref, method, v.ID, same)
	case st == 409 && brief(resp) == "too_many_open_intents" && (same != "" || limit == 0 || len(open) < limit):
		r.violate(Invariants[invOpen], "%s %s %s refused too_many_open_intents with %d open (%q of the method), the cap is %d", kind, ref, method, len(open), same, limit)
	}
}

func (r *run) addIntent(resp []byte, shop string) {
	var v views.Intent
	if err := json.Unmarshal(resp, &v); err != nil {
		r.violate("harness", "intent view: %v", err)
		return
	}
	n := payment.Network(v.Network)
	ad, err := addresses.ParseAddress(n, r.w.e.Config.Networks[n].Chain, v.Address)
	if err != nil {
		r.violate("harness", "parse %s: %v", v.Address, err)
		return
	}
	amt, _ := new(big.Int).SetString(v.AmountBaseUnits, 10)
	in := &intentRec{id: v.ID, kind: string(v.Kind), ref: v.Reference, method: v.Method, address: v.Address, network: n,
		asset: payment.Asset(v.Asset), amount: amt, key: ad.Key, shop: store.StoreOr(shop)}
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
	// The renewed intent itself is not counted: the renewal decides it
	// again first (a detected intent past its deadline may be underpaid),
	// and renews only one that is no longer open.
	var open []openIntent
	for _, o := range r.openIntents(in.shop, in.kind, in.ref) {
		if o.id != in.id {
			open = append(open, o)
		}
	}
	scope, as := r.as(in.shop, "storefront")
	st, resp := r.mutate("POST", path, scope, nil, append(as, hdr...)...)
	r.logf("%srenew %s (%s) -> %d %s", shopTag(in.shop), in.id, in.ref, st, brief(resp))
	r.checkOpen(in.kind, in.ref, in.method, open, st, resp)
	if key != "" && st < 300 {
		r.idem = append(r.idem, idemRec{method: "POST", path: path, key: key, status: st, resp: resp, network: in.network, scope: scope, as: as})
	}
	if st == 201 {
		r.addIntent(resp, in.shop)
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
	scope := q.scope
	if scope == "" {
		scope = "storefront"
	}
	st, resp := r.w.do(q.method, q.path, scope, q.body, append(q.as, "Idempotency-Key", q.key)...)
	r.logf("replay %s %s key %s (outage %v) -> %d %s", q.method, q.path, q.key, outage, st, brief(resp))
	if st != q.status || string(resp) != string(q.resp) {
		r.violate("an idempotent replay returns the stored response", "%s %s key %s first %d %s, replay %d %s",
			q.method, q.path, q.key, q.status, shorten(string(q.resp)), st, shorten(string(resp)))
	}
	if outage {
		r.nodes[q.network].f.FailTip(nil)
	}
	if a.C%3 == 0 {
		r.replayAcross(q)
	}
}
