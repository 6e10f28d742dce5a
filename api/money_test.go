package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// call is Env.Do without t.Fatal, for use from other goroutines.
func call(e *paywatchtest.Env, method, path, scope string, body any, headers ...string) (int, []byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(method, e.Server.URL+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.Keys[scope])
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// apiCode returns the error code of an api/openapi.yaml error body ("" otherwise).
func apiCode(body []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

func decodeInto[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %T: %v in %s", v, err, body)
	}
	return v
}

// fundTopup pays a BTC top-up intent of usd for account through the fake
// chain and waits (by scanning) until it is paid.
func fundTopup(t *testing.T, e *paywatchtest.Env, ref, account, usd string) views.Intent {
	t.Helper()
	v := e.CreateIntent("topup", ref, account, usd, "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "pay-"+ref)
	e.Chains[payment.Bitcoin].Mine(1)
	e.Sync(payment.Bitcoin)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("top-up %s: status %s, want paid", ref, got.Status)
	}
	return v
}

// ledgerSums checks in the database that the account's balance equals the
// sum of its entries and that each entry's balance_after chains from the
// previous one (Env.CheckLedger), and returns the balance in cents and the
// number of debits.
func ledgerSums(t *testing.T, e *paywatchtest.Env, account string) (int64, int) {
	t.Helper()
	debits := 0
	for _, typ := range e.CheckLedger(account) {
		if typ == "debit" {
			debits++
		}
	}
	var bal int64
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT balance_cents FROM accounts WHERE account = $1`, account).Scan(&bal); err != nil {
		t.Fatal(err)
	}
	return bal, debits
}

// 50 concurrent debits of 100.00 against 1,000.00: exactly 10 succeed.
func TestConcurrentDebitsNeverOverdraw(t *testing.T) {
	e := paywatchtest.New(t)
	fundTopup(t, e, "TOPUP-A", "cust-9", "500.00")
	fundTopup(t, e, "TOPUP-B", "cust-9", "500.00")
	if b := e.Balance("cust-9"); b.AvailableUSD != "1000.00" || b.PendingUSD != "0.00" {
		t.Fatalf("funded balance %+v", b)
	}

	// Watch the balance while the debits run: it never goes below zero.
	stop := make(chan struct{})
	var minSeen atomic.Int64
	minSeen.Store(1 << 62)
	var watcher sync.WaitGroup
	watcher.Add(1)
	go func() {
		defer watcher.Done()
		for {
			var bal int64
			if err := e.Store.Pool().QueryRow(context.Background(), `SELECT balance_cents FROM accounts WHERE account = 'cust-9'`).Scan(&bal); err == nil && bal < minSeen.Load() {
				minSeen.Store(bal)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()

	const n = 50
	statuses := make([]int, n)
	bodies := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], bodies[i], errs[i] = call(e, "POST", "/v1/accounts/cust-9/debits", "storefront",
				map[string]string{"reference": fmt.Sprintf("RENT-%02d", i), "amount_usd": "100.00"},
				"Idempotency-Key", fmt.Sprintf("debit-%02d", i))
		}()
	}
	close(start)
	wg.Wait()
	close(stop)
	watcher.Wait()

	ok, short := 0, 0
	var entries []views.LedgerEntry
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("debit %d: %v", i, errs[i])
		}
		switch {
		case statuses[i] == 201:
			ok++
			entries = append(entries, decodeInto[views.LedgerEntry](t, bodies[i]))
		case statuses[i] == 409 && apiCode(bodies[i]) == "insufficient_funds":
			short++
		default:
			t.Fatalf("debit %d: %d %s", i, statuses[i], bodies[i])
		}
	}
	if ok != 10 || short != 40 {
		t.Fatalf("%d debits succeeded and %d were short, want 10 and 40", ok, short)
	}
	if b := e.Balance("cust-9"); b.AvailableUSD != "0.00" {
		t.Fatalf("balance after debits: %+v", b)
	}
	bal, debits := ledgerSums(t, e, "cust-9")
	if bal != 0 || debits != 10 {
		t.Fatalf("database: balance %d, %d debits", bal, debits)
	}
	if m := minSeen.Load(); m < 0 {
		t.Fatalf("balance went to %d", m)
	}
	// Each successful debit paid its order; the short ones left nothing.
	var paid, orders int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE paid_by_entry IS NOT NULL), count(*)
		FROM payables WHERE kind = 'order'`).Scan(&paid, &orders); err != nil {
		t.Fatal(err)
	}
	if paid != 10 || orders != 10 {
		t.Fatalf("%d orders paid by debits, %d orders exist; want 10 and 10", paid, orders)
	}
	var debitEvents int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE type = 'ledger.debited'`).Scan(&debitEvents); err != nil {
		t.Fatal(err)
	}
	if debitEvents != 10 {
		t.Fatalf("%d ledger.debited events, want 10", debitEvents)
	}

	// Replays: the same key and body return the same entry; the same
	// reference under a new key returns the first debit, not a second one.
	first := entries[0]
	var idx int
	fmt.Sscanf(first.Reference, "RENT-%d", &idx)
	status, body, _ := call(e, "POST", "/v1/accounts/cust-9/debits", "storefront",
		map[string]string{"reference": first.Reference, "amount_usd": "100.00"}, "Idempotency-Key", fmt.Sprintf("debit-%02d", idx))
	if status != 201 || decodeInto[views.LedgerEntry](t, body).ID != first.ID {
		t.Fatalf("replay by key: %d %s, want 201 %s", status, body, first.ID)
	}
	status, body, _ = call(e, "POST", "/v1/accounts/cust-9/debits", "storefront",
		map[string]string{"reference": first.Reference, "amount_usd": "100.00"}, "Idempotency-Key", "another-key")
	if status != 200 || decodeInto[views.LedgerEntry](t, body).ID != first.ID {
		t.Fatalf("replay by reference: %d %s, want 200 %s", status, body, first.ID)
	}
	status, body, _ = call(e, "POST", "/v1/accounts/cust-9/debits", "storefront",
		map[string]string{"reference": first.Reference, "amount_usd": "99.00"}, "Idempotency-Key", fmt.Sprintf("debit-%02d", idx))
	if status != 409 || apiCode(body) != "idempotency_mismatch" {
		t.Fatalf("same key, other body: %d %s", status, body)
	}
	status, body, _ = call(e, "POST", "/v1/accounts/cust-9/debits", "storefront",
		map[string]string{"reference": first.Reference, "amount_usd": "99.00"})
	if status != 409 || apiCode(body) != "conflict" {
		t.Fatalf("same reference, other amount: %d %s", status, body)
	}
	if _, debits := ledgerSums(t, e, "cust-9"); debits != 10 {
		t.Fatalf("%d debits after replays, want 10", debits)
	}
	// An order paid from the balance cannot get payment instructions.
	status, body = e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": first.Reference,
		"account": "cust-9", "amount_usd": "100.00", "method": "BTC"})
	if status != 409 || apiCode(body) != "already_paid" {
		t.Fatalf("intent for a debited order: %d %s", status, body)
	}
	// The ledger pages in order with a cursor.
	status, body = e.Do("GET", "/v1/accounts/cust-9/ledger?limit=5", "storefront", nil)
	page := decodeInto[finance.LedgerPage](t, body)
	if status != 200 || len(page.Entries) != 5 || page.Next == nil || page.Entries[0].Type != "credit" {
		t.Fatalf("ledger page 1: %d %s", status, body)
	}
	seen := len(page.Entries)
	for page.Next != nil {
		status, body = e.Do("GET", "/v1/accounts/cust-9/ledger?limit=5&after="+*page.Next, "storefront", nil)
		if status != 200 {
			t.Fatalf("ledger page: %d %s", status, body)
		}
		page = decodeInto[finance.LedgerPage](t, body)
		seen += len(page.Entries)
	}
	if seen != 12 {
		t.Fatalf("ledger lists %d entries, want 12 (2 credits, 10 debits)", seen)
	}
}

// A detected top-up is pending, a paid one available; a reorg that removes
// a paid top-up reverses it without going below zero.
func TestPendingAvailableAndReversal(t *testing.T) {
	e := paywatchtest.New(t)
	v := e.CreateIntent("topup", "TOPUP-R", "cust-r", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "pay-r")
	e.Sync(payment.Bitcoin)
	if b := e.Balance("cust-r"); b.PendingUSD != "100.00" || b.AvailableUSD != "0.00" {
		t.Fatalf("detected top-up: %+v", b)
	}
	status, body := e.Do("POST", "/v1/accounts/cust-r/debits", "storefront", map[string]string{"reference": "RENT-R0", "amount_usd": "10.00"})
	if status != 409 || apiCode(body) != "insufficient_funds" {
		t.Fatalf("debit against a pending balance: %d %s", status, body)
	}
	e.Chains[payment.Bitcoin].Mine(1)
	e.Sync(payment.Bitcoin)
	if b := e.Balance("cust-r"); b.PendingUSD != "0.00" || b.AvailableUSD != "100.00" {
		t.Fatalf("paid top-up: %+v", b)
	}
	status, body = e.Do("POST", "/v1/accounts/cust-r/debits", "storefront", map[string]string{"reference": "RENT-R1", "amount_usd": "60.00"})
	if status != 201 {
		t.Fatalf("debit: %d %s", status, body)
	}
	// The two blocks since the payment are replaced by three empty ones.
	e.Chains[payment.Bitcoin].Reorg(2, 1, false)
	e.Sync(payment.Bitcoin)
	if got := e.Intent(v.ID); got.Status != "reverted" || got.Transfers[0].Classification != "reverted" {
		t.Fatalf("after reorg: status %s transfers %+v", got.Status, got.Transfers)
	}
	b := e.Balance("cust-r")
	if b.AvailableUSD != "0.00" || b.PendingUSD != "0.00" || b.UnrecoveredUSD != "60.00" {
		t.Fatalf("after reversal: %+v", b)
	}
	status, body = e.Do("GET", "/v1/accounts/cust-r/ledger", "storefront", nil)
	page := decodeInto[finance.LedgerPage](t, body)
	if status != 200 || len(page.Entries) != 3 {
		t.Fatalf("ledger: %d %s", status, body)
	}
	rev := page.Entries[2]
	if rev.Type != "reversal" || rev.AmountUSD != "100.00" || rev.BalanceAfterUSD != "0.00" || rev.UnrecoveredUSD != "60.00" ||
		rev.IntentID == nil || *rev.IntentID != v.ID {
		t.Fatalf("reversal entry: %+v", rev)
	}
	if bal, _ := ledgerSums(t, e, "cust-r"); bal != 0 {
		t.Fatalf("balance %d", bal)
	}
	var reversed int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE type = 'ledger.reversed' AND account = 'cust-r'`).Scan(&reversed); err != nil {
		t.Fatal(err)
	}
	if reversed != 1 {
		t.Fatalf("%d ledger.reversed events, want 1", reversed)
	}
}

// The event feed reads in seq order after a cursor and long-polls.
func TestEventFeedOrderCursorAndLongPoll(t *testing.T) {
	e := paywatchtest.New(t)
	for i := range 5 {
		e.CreateIntent("order", fmt.Sprintf("ORD-EV-%d", i), "", "10.00", "ETH")
	}
	status, body := e.Do("GET", "/v1/events?limit=3", "storefront", nil)
	type page struct {
		Events []views.Event `json:"events"`
		Next   string        `json:"next"`
	}
	p1 := decodeInto[page](t, body)
	if status != 200 || len(p1.Events) != 3 || p1.Next != p1.Events[2].ID {
		t.Fatalf("page 1: %d %s", status, body)
	}
	status, body = e.Do("GET", "/v1/events?after="+p1.Next, "storefront", nil)
	p2 := decodeInto[page](t, body)
	all := append(p1.Events, p2.Events...)
	var want []string
	rows, err := e.Store.Pool().Query(context.Background(), `SELECT id FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		want = append(want, id)
	}
	rows.Close()
	if status != 200 || len(all) != len(want) || len(want) != 5 {
		t.Fatalf("feed has %d events, table %d: %s", len(all), len(want), body)
	}
	for i := range all {
		if all[i].ID != want[i] || (i > 0 && all[i].Seq <= all[i-1].Seq) || all[i].Type != "intent.created" {
			t.Fatalf("event %d: %+v, want id %s in seq order", i, all[i], want[i])
		}
	}
	if status, body = e.Do("GET", "/v1/events?after=ev_nope", "storefront", nil); status != 400 {
		t.Fatalf("unknown cursor: %d %s", status, body)
	}
	if status, _ = e.Do("GET", "/v1/events", "finance", nil); status != 403 {
		t.Fatalf("finance key on the feed: %d", status)
	}
	last := all[len(all)-1].ID

	// Nothing new: the long-poll waits for its whole wait.
	t0 := time.Now()
	status, body = e.Do("GET", "/v1/events?wait=1s&after="+last, "storefront", nil)
	if status != 200 || len(decodeInto[page](t, body).Events) != 0 || time.Since(t0) < time.Second {
		t.Fatalf("empty long-poll: %d %s after %s", status, body, time.Since(t0))
	}
	// Something new: it returns as soon as the event is committed.
	type result struct {
		status  int
		body    []byte
		elapsed time.Duration
		err     error
	}
	done := make(chan result, 1)
	t0 = time.Now()
	go func() {
		s, b, err := call(e, "GET", "/v1/events?wait=20s&after="+last, "storefront", nil)
		done <- result{s, b, time.Since(t0), err}
	}()
	created := e.CreateIntent("order", "ORD-EV-LATE", "", "10.00", "ETH")
	r := <-done
	if r.err != nil || r.status != 200 {
		t.Fatalf("long-poll: %v %d %s", r.err, r.status, r.body)
	}
	got := decodeInto[page](t, r.body)
	if len(got.Events) != 1 || got.Events[0].Type != "intent.created" || !bytes.Contains(got.Events[0].Data, []byte(created.ID)) {
		t.Fatalf("long-poll events: %s", r.body)
	}
	if r.elapsed > 5*time.Second {
		t.Fatalf("long-poll returned after %s, want well before its 20s wait", r.elapsed)
	}
	t.Logf("long-poll returned %s after the request started", r.elapsed)
}
