package api_test

import (
	"bytes"
	"context"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/reports"
)

// report fetches the reconciliation of [from, to) with extra query
// parameters and fails the test unless it is 200.
func report(t *testing.T, e *paywatchtest.Env, from, to, format string, extra ...string) []byte {
	t.Helper()
	q := url.Values{"from": {from}, "to": {to}, "format": {format}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	st, body := e.Do("GET", "/v1/reports/reconciliation?"+q.Encode(), "finance", nil)
	if st != 200 {
		t.Fatalf("report %s: %d %s", q.Encode(), st, body)
	}
	return body
}

// rowOf returns the report row of a transfer.
func rowOf(t *testing.T, rep reports.Reconciliation, id string) reports.ReconRow {
	t.Helper()
	for _, r := range rep.Rows {
		if r.TransferID == id {
			return r
		}
	}
	t.Fatalf("no row for transfer %s in %+v", id, rep.Rows)
	return reports.ReconRow{}
}

// A report as of T counts only what was recorded up to T: a transfer
// resolved, confirmed or reverted later leaves it unchanged byte for byte.
// A closed period is stored and served as it was closed.
func TestReconciliationAsOfIsReproducibleAndClosedPeriodsAreStored(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin))
	ctx := context.Background()
	btc, ltc := payment.Bitcoin, payment.Litecoin

	// C: a paid LTC order (reverted later). A: a BTC order with 1 of 2
	// confirmations (confirmed later). U: a payment to a look-ahead BTC
	// address (resolved later).
	c := e.CreateIntent("order", "ORD-ASOF-C", "", "100.00", "LTC")
	e.Pay(c, payment.Native, paywatchtest.Units(c.AmountBaseUnits), "asof-c")
	e.Chains[ltc].Mine(5)
	e.Sync(ltc)
	payLookahead(t, e, btc, big.NewInt(10000), "asof-u")
	a := e.CreateIntent("order", "ORD-ASOF-A", "", "100.00", "BTC")
	e.Pay(a, payment.Native, paywatchtest.Units(a.AmountBaseUnits), "asof-a")
	e.Sync(btc)
	if got := e.Intent(c.ID); got.Status != "paid" {
		t.Fatalf("LTC intent: %s", got.Status)
	}
	if got := e.Intent(a.ID); got.Status != "detected" {
		t.Fatalf("BTC intent: %s", got.Status)
	}
	trA, trC := e.Intent(a.ID).Transfers[0], e.Intent(c.ID).Transfers[0]
	trU := onlyTransfer(t, e, "unknown_address")

	e.Clock.Advance(time.Minute)
	t1 := e.Clock.Now().UTC().Format(time.RFC3339Nano)
	from, to := "2026-11-01", "2026-12-01"
	csv1 := report(t, e, from, to, "csv", "as_of", t1)
	json1 := report(t, e, from, to, "json", "as_of", t1)
	// Now is the default, and running it again changes nothing.
	if b := report(t, e, from, to, "csv"); !bytes.Equal(b, csv1) {
		t.Fatalf("default as_of (now) differs from as_of=%s:\n%s\n%s", t1, b, csv1)
	}
	if b := report(t, e, from, to, "json"); !bytes.Equal(b, json1) {
		t.Fatalf("default as_of json differs:\n%s\n%s", b, json1)
	}
	rep1 := decodeInto[reports.Reconciliation](t, json1)
	if got := rep1.AsOf.UTC().Format(time.RFC3339Nano); got != t1 {
		t.Fatalf("as_of %s, want %s", got, t1)
	}
	if r := rowOf(t, rep1, trA.ID); r.Status != "confirming" || r.Confirmations != 1 || r.IntentStatus != "detected" {
		t.Fatalf("A at T1: %+v", r)
	}
	if r := rowOf(t, rep1, trC.ID); r.Status != "confirmed" || r.Classification != "settles" || r.IntentStatus != "paid" || r.Confirmations != 6 {
		t.Fatalf("C at T1: %+v", r)
	}
	if r := rowOf(t, rep1, trU.ID); r.Resolution != "" || r.IntentID != "" || r.Classification != "unknown_address" {
		t.Fatalf("U at T1: %+v", r)
	}

	// Later: A confirms, U is resolved, C's blocks are reorganised away.
	e.Clock.Advance(time.Minute)
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	d := e.CreateIntent("order", "ORD-ASOF-D", "", "5.00", "BTC") // what U paid, it turns out
	if st, b := resolve(e, trU.ID, "finance", map[string]string{"action": "credit_intent", "intent_id": d.ID, "note": "customer sent D to an old address"}); st != 200 {
		t.Fatalf("resolve U: %d %s", st, b)
	}
	e.Chains[ltc].Reorg(6, 1, false)
	e.Sync(ltc)
	if got := e.Intent(c.ID); got.Status != "reverted" {
		t.Fatalf("LTC intent after the reorg: %s", got.Status)
	}
	e.Clock.Advance(time.Minute)

	if b := report(t, e, from, to, "csv", "as_of", t1); !bytes.Equal(b, csv1) {
		t.Fatalf("the report as of %s changed:\nbefore\n%s\nnow\n%s", t1, csv1, b)
	}
	if b := report(t, e, from, to, "json", "as_of", t1); !bytes.Equal(b, json1) {
		t.Fatalf("the json report as of %s changed:\nbefore\n%s\nnow\n%s", t1, json1, b)
	}
	now := decodeInto[reports.Reconciliation](t, report(t, e, from, to, "json"))
	if r := rowOf(t, now, trA.ID); r.Status != "confirmed" || r.IntentStatus != "paid" || r.Confirmations != 2 {
		t.Fatalf("A now: %+v", r)
	}
	if r := rowOf(t, now, trC.ID); r.Status != "orphaned" || r.Classification != "reverted" || r.IntentStatus != "reverted" {
		t.Fatalf("C now: %+v", r)
	}
	if r := rowOf(t, now, trU.ID); r.Resolution != "credit_intent" || r.IntentID != d.ID || r.IntentStatus != "paid" {
		t.Fatalf("U now: %+v", r)
	}
	// A time before anything was recorded has no rows; the future is refused.
	if rep := decodeInto[reports.Reconciliation](t, report(t, e, from, to, "json", "as_of", "2026-11-30T13:00:00Z")); len(rep.Rows) != 0 {
		t.Fatalf("as of before the transfers: %+v", rep.Rows)
	}
	if st, body := e.Do("GET", "/v1/reports/reconciliation?from=2026-11-01&to=2026-12-01&as_of=2027-01-01", "finance", nil); st != 400 || errCode(t, body) != "invalid_request" {
		t.Fatalf("as_of in the future: %d %s", st, body)
	}

	// Close the period up to now.
	end := e.Clock.Now().UTC().Format(time.RFC3339)
	if st, body := e.Do("POST", "/v1/reports/closes", "finance", map[string]string{"from": from, "to": to}); st != 400 || errCode(t, body) != "invalid_request" {
		t.Fatalf("closing a period that has not ended: %d %s", st, body)
	}
	if st, _ := e.Do("POST", "/v1/reports/closes", "storefront", map[string]string{"from": from, "to": end}); st != 403 {
		t.Fatalf("storefront key closing a period: %d", st)
	}
	st, first := e.Do("POST", "/v1/reports/closes", "finance", map[string]string{"from": from, "to": end})
	if st != 201 {
		t.Fatalf("close: %d %s", st, first)
	}
	closed := decodeInto[reports.ReportClose](t, first)
	if closed.ID == "" || closed.ClosedBy != "finance-key" || !closed.AsOf.Equal(e.Clock.Now()) {
		t.Fatalf("close: %+v", closed)
	}
	closedCSV := report(t, e, from, end, "csv")
	closedJSON := report(t, e, from, end, "json")
	if rep := decodeInto[reports.Reconciliation](t, closedJSON); rep.Closed == nil || rep.Closed.ID != closed.ID || len(rep.Rows) != 3 {
		t.Fatalf("closed report: %s", closedJSON)
	}
	// Closing again is the same close.
	e.Clock.Advance(time.Minute)
	if st, again := e.Do("POST", "/v1/reports/closes", "finance", map[string]string{"from": from, "to": end}); st != 200 || !bytes.Equal(again, first) {
		t.Fatalf("second close: %d %s, want 200 %s", st, again, first)
	}
	// A decision after the close changes the live report, not the closed one.
	if st, b := resolve(e, trC.ID, "finance", map[string]string{"action": "ignore", "note": "reorganised away"}); st != 200 {
		t.Fatalf("resolve C: %d %s", st, b)
	}
	if b := report(t, e, from, end, "csv"); !bytes.Equal(b, closedCSV) {
		t.Fatalf("the closed period changed:\nclosed\n%s\nnow\n%s", closedCSV, b)
	}
	if b := report(t, e, from, end, "json"); !bytes.Equal(b, closedJSON) {
		t.Fatalf("the closed json changed:\nclosed\n%s\nnow\n%s", closedJSON, b)
	}
	live := decodeInto[reports.Reconciliation](t, report(t, e, from, end, "json", "as_of", e.Clock.Now().UTC().Format(time.RFC3339Nano)))
	if r := rowOf(t, live, trC.ID); live.Closed != nil || r.Resolution != "ignore" {
		t.Fatalf("live report after the close: closed %+v, C %+v", live.Closed, r)
	}
	st, body := e.Do("GET", "/v1/reports/closes", "finance", nil)
	if list := decodeInto[struct {
		Closes []reports.ReportClose `json:"closes"`
	}](t, body); st != 200 || len(list.Closes) != 1 || list.Closes[0].ID != closed.ID {
		t.Fatalf("closes: %d %s", st, body)
	}
	// The stored report cannot be edited, even in the database.
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE report_closes SET report_csv = ''::bytea`); err == nil {
		t.Fatal("a closed report was edited")
	}
	if _, err := e.Store.Pool().Exec(ctx, `DELETE FROM report_closes`); err == nil {
		t.Fatal("a closed report was deleted")
	}
}
