package sim

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// bodyCheck compares every event body with what the API answers for its
// object right after the commit that wrote it (the store's OnCommit hook):
// an intent.* event with GET /v1/intents/{id}, a transfer.* event with GET
// /v1/transfers/{id}, a ledger.* event with the entry in GET
// /v1/accounts/{account}/ledger, every field, times at the API's
// precision. Of several events about one object in a commit, the last is
// compared (the earlier ones describe states the commit went through).
type bodyCheck struct {
	mu   sync.Mutex
	seq  int64 // the last event checked
	busy bool  // a check is running (a GET that commits must not recurse)
	// left: a commit that appended events came while a check ran; its
	// events are the next check's.
	left bool
}

// onCommit checks the events a commit wrote (events: it appended some).
// It runs in the committing goroutine; a commit of the check's own reads,
// or of the other debit of a concurrent pair, while a check runs is left
// to the next check, which compares what a later commit may have changed
// without an event (a transfer's confirmations) leniently. A commit that
// appended no event, with none left by an earlier one, has nothing to
// check: the events after the last checked are read only when there are.
func (r *run) onCommit(events bool) {
	r.bodies.mu.Lock()
	if r.bodies.busy {
		r.bodies.left = r.bodies.left || events
		r.bodies.mu.Unlock()
		return
	}
	if !events && !r.bodies.left {
		r.bodies.mu.Unlock()
		return
	}
	r.bodies.busy, r.bodies.left = true, false
	r.bodies.mu.Unlock()
	r.checkBodies(true)
	r.bodies.mu.Lock()
	r.bodies.busy = false
	r.bodies.mu.Unlock()
}

type evBody struct {
	seq               int64
	typ, obj, account string
	data              []byte
}

// checkBodies compares the bodies of the events written since the last
// check with the API (strict: right after their commit).
func (r *run) checkBodies(strict bool) {
	rows, err := r.w.e.Store.Pool().Query(r.ctx, `SELECT seq, type, coalesce(intent_id, ''), coalesce(transfer_id, ''), coalesce(account, ''), data
		FROM events WHERE seq > $1 ORDER BY seq`, r.bodies.seq)
	if err != nil {
		r.violate("harness", "events: %v", err)
		return
	}
	last := map[string]evBody{}
	var order []string
	for rows.Next() {
		var e evBody
		var intent, transfer string
		if err := rows.Scan(&e.seq, &e.typ, &intent, &transfer, &e.account, &e.data); err != nil {
			rows.Close()
			r.violate("harness", "events: %v", err)
			return
		}
		r.bodies.seq = e.seq
		switch {
		case strings.HasPrefix(e.typ, "intent."):
			e.obj = "intent " + intent
		case strings.HasPrefix(e.typ, "transfer."):
			e.obj = "transfer " + transfer
		case strings.HasPrefix(e.typ, "ledger."):
			var v struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(e.data, &v)
			e.obj = "ledger " + v.ID
		default:
			continue
		}
		if _, ok := last[e.obj]; !ok {
			order = append(order, e.obj)
		}
		last[e.obj] = e
	}
	rows.Close()
	for _, obj := range order {
		e := last[obj]
		api, err := r.apiBody(e)
		if err != nil {
			r.violate(Invariants[invBodies], "event %d %s: %v", e.seq, e.typ, err)
			continue
		}
		if d := bodyDiff(e.data, api, strict); d != "" {
			r.violate(Invariants[invBodies], "event %d %s body differs from the API right after its commit: %s", e.seq, e.typ, d)
		}
	}
}

// apiBody is the API's answer for the object of event e.
func (r *run) apiBody(e evBody) ([]byte, error) {
	kind, id, _ := strings.Cut(e.obj, " ")
	var path, scope string
	switch kind {
	case "intent":
		// A key with the finance scope: the stored body is finance's
		// (storefront answers and the feed leave its notes out alike).
		path, scope = "/v1/intents/"+id, "all"
	case "transfer":
		path, scope = "/v1/transfers/"+id, "finance"
	case "ledger":
		after := ""
		for {
			q := "/v1/accounts/" + url.PathEscape(e.account) + "/ledger?limit=1000"
			if after != "" {
				q += "&after=" + url.QueryEscape(after)
			}
			st, body := r.w.do("GET", q, "storefront", nil)
			var page struct {
				Entries []json.RawMessage `json:"entries"`
				Next    *string           `json:"next"`
			}
			if st != 200 || json.Unmarshal(body, &page) != nil {
				return nil, fmt.Errorf("GET %s: %d %s", q, st, body)
			}
			for _, raw := range page.Entries {
				var v struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(raw, &v) == nil && v.ID == id {
					return raw, nil
				}
			}
			if page.Next == nil {
				return nil, fmt.Errorf("ledger entry %s is not in account %s's ledger", id, e.account)
			}
			after = *page.Next
		}
	}
	st, body := r.w.do("GET", path, scope, nil)
	if st != 200 {
		return nil, fmt.Errorf("GET %s: %d %s", path, st, body)
	}
	return body, nil
}

// bodyDiff lists where two JSON bodies differ; not strict, it leaves out
// confirmations (a later block changes them without an event).
func bodyDiff(event, api []byte, strict bool) string {
	var x, y any
	if json.Unmarshal(event, &x) != nil || json.Unmarshal(api, &y) != nil {
		return fmt.Sprintf("not JSON: %s / %s", event, api)
	}
	if !strict {
		dropKey(x, "confirmations")
		dropKey(y, "confirmations")
	}
	var out []string
	diffJSON("", x, y, &out)
	sort.Strings(out)
	if len(out) > 6 {
		out = append(out[:6], fmt.Sprintf("… %d more", len(out)-6))
	}
	return strings.Join(out, "; ")
}

func dropKey(v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for _, e := range x {
			dropKey(e, key)
		}
	case []any:
		for _, e := range x {
			dropKey(e, key)
		}
	}
}

func diffJSON(path string, x, y any, out *[]string) {
	if reflect.DeepEqual(x, y) {
		return
	}
	xm, xok := x.(map[string]any)
	ym, yok := y.(map[string]any)
	if xok && yok {
		for k := range xm {
			diffJSON(path+"."+k, xm[k], ym[k], out)
		}
		for k := range ym {
			if _, ok := xm[k]; !ok {
				diffJSON(path+"."+k, nil, ym[k], out)
			}
		}
		return
	}
	xa, xok := x.([]any)
	ya, yok := y.([]any)
	if xok && yok && len(xa) == len(ya) {
		for i := range xa {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), xa[i], ya[i], out)
		}
		return
	}
	xj, _ := json.Marshal(x)
	yj, _ := json.Marshal(y)
	*out = append(*out, fmt.Sprintf("%s: event %s, API %s", path, clip(string(xj)), clip(string(yj))))
}

// clip shortens a JSON value for a message.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
