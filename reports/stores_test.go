package reports_test

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Two stores with the same facts (an order paid exactly, an order paid by
// half, a top-up paid) have equal but separate books: the same totals, no
// row of the other's in the report, the CSV or a close, and a period
// closed by each store on its own (issue 34 item 1: books per store).
func TestTwoStoresKeepEqualButSeparateBooks(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	e.AddShop("shop-b")
	e.Keys["b-finance"] = e.ShopKey("shop-b", "b-finance", "finance")
	facts := func() []views.Intent {
		return []views.Intent{
			e.CreateIntent("order", "ORD-1", "cust-1", "10.00", "BTC"),
			e.CreateIntent("order", "ORD-2", "cust-2", "20.00", "BTC"),
			e.CreateIntent("topup", "TOP-1", "cust-1", "100.00", "BTC"),
		}
	}
	// The same references in both stores: a namespace each.
	b := facts()
	e.IntoShop("shop-b", b...)
	a := facts()
	pay := func(ins []views.Intent, tag string) {
		e.Pay(ins[0], payment.Native, paywatchtest.Units(ins[0].AmountBaseUnits), tag+"-exact")
		e.Pay(ins[1], payment.Native, new(big.Int).Div(paywatchtest.Units(ins[1].AmountBaseUnits), big.NewInt(2)), tag+"-half")
		e.Pay(ins[2], payment.Native, paywatchtest.Units(ins[2].AmountBaseUnits), tag+"-topup")
	}
	pay(a, "a")
	pay(b, "b")
	e.Chains[payment.Bitcoin].Mine(3)
	e.Sync(payment.Bitcoin)
	e.Clock.Advance(time.Hour)

	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), e.Clock.Now().Truncate(time.Minute)
	ra, err := e.Reports.Reconcile(ctx, "default", from, to, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := e.Reports.Reconcile(ctx, "shop-b", from, to, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ra.Rows) != 3 || len(rb.Rows) != 3 {
		t.Fatalf("rows: default %d, shop-b %d; want 3 each", len(ra.Rows), len(rb.Rows))
	}
	// Both stores' reports at once: each what Reconcile answers for its
	// store, the rows read in one round trip (issue 37 item 3).
	var sent atomic.Int64
	traced, err := store.OpenWith(ctx, e.Config.DatabaseURL, store.Options{Trace: func(string) { sent.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()
	each, err := reports.New(reports.Options{Store: traced, Clock: e.Clock}).ReconcileEach(ctx, []string{"default", "shop-b"}, from, to, ra.AsOf)
	if err != nil || len(each) != 2 || !reflect.DeepEqual(each[0], ra) || !reflect.DeepEqual(each[1], rb) {
		t.Fatalf("ReconcileEach: %v\n%+v\nwant %+v and %+v", err, each, ra, rb)
	}
	if n := sent.Load(); n != 1 {
		t.Fatalf("ReconcileEach of two stores took %d round trips, want 1", n)
	}
	if !reflect.DeepEqual(ra.Totals, rb.Totals) {
		t.Errorf("the same facts give other totals:\ndefault %+v\nshop-b  %+v", ra.Totals, rb.Totals)
	}
	own := func(ins []views.Intent) map[string]bool {
		m := map[string]bool{}
		for _, in := range ins {
			m[in.ID] = true
		}
		return m
	}
	for _, c := range []struct {
		name string
		rep  reports.Reconciliation
		ins  []views.Intent
	}{{"default", ra, a}, {"shop-b", rb, b}} {
		for _, r := range c.rep.Rows {
			if !own(c.ins)[r.IntentID] {
				t.Errorf("%s's report has transfer %s of intent %s, not one of its own", c.name, r.TransferID, r.IntentID)
			}
		}
	}

	// The API's CSV, for each store's key: none of the other's rows.
	csvOf := func(scope string) string {
		status, body := e.Do("GET", "/v1/reports/reconciliation?format=csv&from=2026-11-01&to="+to.Format(time.RFC3339), scope, nil)
		if status != 200 {
			t.Fatalf("%s: reconciliation csv: %d %s", scope, status, body)
		}
		return string(body)
	}
	csvA, csvB := csvOf("finance"), csvOf("b-finance")
	for _, r := range rb.Rows {
		if strings.Contains(csvA, r.TransferID) || strings.Contains(csvA, r.IntentID) || strings.Contains(csvA, r.TxID) {
			t.Errorf("the default store's CSV names shop-b's transfer %s", r.TransferID)
		}
		if !strings.Contains(csvB, r.TransferID) {
			t.Errorf("shop-b's CSV lacks its transfer %s", r.TransferID)
		}
	}
	for _, r := range ra.Rows {
		if strings.Contains(csvB, r.TransferID) || strings.Contains(csvB, r.IntentID) || strings.Contains(csvB, r.TxID) {
			t.Errorf("shop-b's CSV names the default store's transfer %s", r.TransferID)
		}
	}
	if n := strings.Count(csvB, "\n"); n != 4 {
		t.Errorf("shop-b's CSV has %d lines, want a header and 3 rows", n)
	}

	// Closes: each store closes the same period once, on its own.
	period := map[string]string{"from": "2026-11-01", "to": to.Format(time.RFC3339)}
	closeAs := func(scope string, want int) reports.ReportClose {
		status, body := e.Do("POST", "/v1/reports/closes", scope, period)
		if status != want {
			t.Fatalf("%s: close: %d %s, want %d", scope, status, body, want)
		}
		var c reports.ReportClose
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	cb := closeAs("b-finance", 201)
	closeAs("b-finance", 200)
	ca := closeAs("finance", 201) // the default store's period is still open
	if ca.ID == cb.ID {
		t.Fatalf("both stores got close %s", ca.ID)
	}
	listOf := func(scope string) []reports.ReportClose {
		status, body := e.Do("GET", "/v1/reports/closes", scope, nil)
		if status != 200 {
			t.Fatalf("%s: closes: %d %s", scope, status, body)
		}
		var v struct{ Closes []reports.ReportClose }
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return v.Closes
	}
	if l := listOf("b-finance"); len(l) != 1 || l[0].ID != cb.ID {
		t.Errorf("shop-b's closes: %+v, want only %s", l, cb.ID)
	}
	if l := listOf("finance"); len(l) != 1 || l[0].ID != ca.ID {
		t.Errorf("the default store's closes: %+v, want only %s", l, ca.ID)
	}
	// The closed period as stored: shop-b's rows only.
	if got := csvOf("b-finance"); got == csvA || strings.Contains(got, ra.Rows[0].TransferID) {
		t.Errorf("shop-b's closed report shows the default store's rows")
	}
	// A store's key naming another store is refused, naming only its own.
	status, body := e.Do("GET", "/v1/reports/closes", "b-finance", nil, "Paywatch-Store", "default")
	if status != 403 || strings.Contains(string(body), `"default"`) {
		t.Errorf("shop-b's key asking for the default store: %d %s", status, body)
	}
}
