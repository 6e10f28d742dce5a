package sim

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// books is what "same facts, same books" compares (issue 21): every
// intent's status, received and paid_at; every transfer's classification,
// intent and status; every account's available and pending balance (as the
// API answers); the unresolved inbox (as the API answers); per method, the
// reconciliation's settled, unresolved and resolved sums; each payable's
// payer. Ledger entries are not in it: a round trip may add reversal and
// credit pairs that net to zero.
type books struct {
	intents   map[string]string
	payableOf map[string]int64
	transfers map[string]string
	intentOf  map[string]string
	balances  map[string]string
	inbox     map[string]bool
	recon     map[string]string
	payers    map[int64]string
}

// books reads the books now.
func (r *run) books() (*books, error) {
	ctx, pool := r.ctx, r.w.e.Store.Pool()
	b := &books{intents: map[string]string{}, payableOf: map[string]int64{}, transfers: map[string]string{}, intentOf: map[string]string{},
		balances: map[string]string{}, inbox: map[string]bool{}, recon: map[string]string{}, payers: map[int64]string{}}
	// The four tables in one round trip.
	batch := &pgx.Batch{}
	batch.Queue(`SELECT id, payable_id, status, received::text, paid_at FROM intents`)
	batch.Queue(`SELECT id, txid, idx, classification, coalesce(intent_id, ''), status FROM transfers`)
	batch.Queue(`SELECT id, coalesce(paid_by_intent, coalesce('debit ' || paid_by_entry, '')) FROM payables`)
	batch.Queue(`SELECT ` + qualifiedSQL("store_id", "account") + ` FROM accounts ORDER BY account`)
	br := pool.SendBatch(ctx, batch)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, st, recv string
		var pid int64
		var paid *time.Time
		if err := rows.Scan(&id, &pid, &st, &recv, &paid); err != nil {
			rows.Close()
			return nil, err
		}
		p := "-"
		if paid != nil {
			p = paid.UTC().Format(time.RFC3339Nano)
		}
		b.intents[id], b.payableOf[id] = fmt.Sprintf("%s received=%s paid_at=%s", st, recv, p), pid
	}
	rows.Close()
	if rows, err = br.Query(); err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, txid, class, intent, st string
		var idx int64
		if err := rows.Scan(&id, &txid, &idx, &class, &intent, &st); err != nil {
			rows.Close()
			return nil, err
		}
		b.transfers[id] = fmt.Sprintf("%s:%d %s intent=%s %s", r.txName(txid), idx, class, intent, st)
		b.intentOf[id] = intent
	}
	rows.Close()
	if rows, err = br.Query(); err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var by string
		if err := rows.Scan(&id, &by); err != nil {
			rows.Close()
			return nil, err
		}
		b.payers[id] = by
	}
	rows.Close()
	var accounts []string
	if rows, err = br.Query(); err != nil {
		return nil, err
	}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			rows.Close()
			return nil, err
		}
		accounts = append(accounts, a)
	}
	rows.Close()
	if err := br.Close(); err != nil {
		return nil, err
	}
	for _, a := range accounts {
		shop, name := unqualified(a)
		st, body := r.w.do("GET", "/v1/accounts/"+name+"/balance", "storefront", nil, named(shop)...)
		var v struct {
			Available string `json:"available_usd"`
			Pending   string `json:"pending_usd"`
		}
		if st != 200 || json.Unmarshal(body, &v) != nil {
			return nil, fmt.Errorf("GET balance %s: %d %s", a, st, body)
		}
		b.balances[a] = "available " + v.Available + " pending " + v.Pending
	}
	// Each store's inbox, as its finance reads it.
	for _, shop := range shops {
		if err := r.inbox(b, shop); err != nil {
			return nil, err
		}
	}
	// Each store's reconciliation.
	now := r.w.e.Clock.Now()
	reps, err := r.w.e.Reports.ReconcileEach(ctx, shops, time.Unix(0, 0), now.Add(48*time.Hour), now)
	if err != nil {
		return nil, err
	}
	for i, shop := range shops {
		for _, m := range reps[i].Totals {
			b.recon[qualified(shop, m.Method)] = fmt.Sprintf("settled %s unresolved %s resolved %s", m.Settled, m.Unresolved, m.Resolved)
		}
	}
	return b, nil
}

// diff lists what differs between two books, leaving out the payables in
// skip (their intents and transfers); with skip not empty, the global
// parts (balances, inbox, reconciliation) are left out too.
func (b *books) diff(o *books, skip map[int64]bool) string {
	var out []string
	skipIntent := func(id string) bool { return skip[b.payableOf[id]] || skip[o.payableOf[id]] }
	cmp := func(what string, x, y map[string]string, skipKey func(string) bool) {
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		for k := range keys {
			if skipKey != nil && skipKey(k) {
				continue
			}
			if x[k] != y[k] {
				out = append(out, fmt.Sprintf("%s %s: %q -> %q", what, k, x[k], y[k]))
			}
		}
	}
	cmp("intent", b.intents, o.intents, skipIntent)
	cmp("transfer", b.transfers, o.transfers, func(id string) bool {
		return skipIntent(b.intentOf[id]) || skipIntent(o.intentOf[id])
	})
	if len(skip) == 0 {
		cmp("account", b.balances, o.balances, nil)
		cmp("reconciliation", b.recon, o.recon, nil)
		ib, io := map[string]string{}, map[string]string{}
		for id := range b.inbox {
			ib[id] = "unresolved"
		}
		for id := range o.inbox {
			io[id] = "unresolved"
		}
		cmp("inbox", ib, io, nil)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// payerChanged returns the payables whose payer is not the same in b and
// mid: a sibling paid while the payer's payment was away is the payer for
// good (the storefront was told; docs/behaviour.md invariant 6), so the books of
// such a payable may rightly differ after a round trip.
func (b *books) payerChanged(mid *books) map[int64]bool {
	out := map[int64]bool{}
	for id, by := range mid.payers {
		if by != "" && by != b.payers[id] {
			out[id] = true
		}
	}
	return out
}

// inbox adds shop's unresolved transfers, as its finance reads them, to b.
func (r *run) inbox(b *books, shop string) error {
	after := ""
	for {
		q := "/v1/transfers?status=unresolved&limit=1000"
		if after != "" {
			q += "&after=" + url.QueryEscape(after)
		}
		st, body := r.w.do("GET", q, "finance", nil, named(shop)...)
		var page struct {
			Transfers []struct {
				ID string `json:"id"`
			} `json:"transfers"`
			Next *string `json:"next"`
		}
		if st != 200 || json.Unmarshal(body, &page) != nil {
			return fmt.Errorf("GET %s inbox: %d %s", shop, st, body)
		}
		for _, t := range page.Transfers {
			b.inbox[t.ID] = true
		}
		if page.Next == nil {
			break
		}
		after = *page.Next
	}
	return nil
}
