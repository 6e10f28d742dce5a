package api_test

import (
	"context"
	"encoding/csv"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/views"
)

// payLookahead pays an address of ours that no intent has (a look-ahead
// derivation) and returns it.
func payLookahead(t *testing.T, e *paywatchtest.Env, n payment.Network, amount *big.Int, label string) string {
	t.Helper()
	var addr string
	var key []byte
	err := e.Store.Pool().QueryRow(context.Background(), `SELECT address, key FROM addresses
		WHERE network = $1 AND key IN (SELECT key FROM free_addresses WHERE network = $1) ORDER BY derivation_index DESC LIMIT 1`, string(n)).Scan(&addr, &key)
	if err != nil {
		t.Fatalf("look-ahead address: %v", err)
	}
	e.Chains[n].Send(chainstest.TxID(label), 0, payment.Native, key, addr, amount)
	e.Chains[n].Mine(1)
	return addr
}

// inbox lists the finance inbox with a query string.
func inbox(t *testing.T, e *paywatchtest.Env, query string) finance.InboxPage {
	t.Helper()
	status, body := e.Do("GET", "/v1/transfers?"+query, "finance", nil)
	if status != 200 {
		t.Fatalf("inbox %s: %d %s", query, status, body)
	}
	return decodeInto[finance.InboxPage](t, body)
}

// onlyTransfer returns the single inbox transfer with a classification.
func onlyTransfer(t *testing.T, e *paywatchtest.Env, class string) views.Transfer {
	t.Helper()
	p := inbox(t, e, "classification="+class)
	if len(p.Transfers) != 1 {
		t.Fatalf("inbox has %d %s transfers, want 1: %+v", len(p.Transfers), class, p.Transfers)
	}
	return p.Transfers[0]
}

func resolve(e *paywatchtest.Env, id, scope string, req any) (int, []byte) {
	return e.Do("POST", "/v1/transfers/"+id+"/resolve", scope, req)
}

func TestResolveActionsAndRefusals(t *testing.T) {
	e := paywatchtest.New(t)
	btc := payment.Bitcoin
	// A late top-up payment.
	late := e.CreateIntent("topup", "TOPUP-L", "cust-l", "100.00", "BTC")
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.Pay(late, payment.Native, paywatchtest.Units(late.AmountBaseUnits), "late")
	e.Sync(btc)
	// An overpaid order (surplus 5000 sat = 2.50 USD at 50,000).
	over := e.CreateIntent("order", "ORD-OV", "cust-o", "100.00", "BTC")
	e.Pay(over, payment.Native, new(big.Int).Add(paywatchtest.Units(over.AmountBaseUnits), big.NewInt(5000)), "over")
	exact := e.CreateIntent("order", "ORD-EX", "", "10.00", "BTC")
	e.Pay(exact, payment.Native, paywatchtest.Units(exact.AmountBaseUnits), "exact")
	// A duplicate, a dust transfer and a payment to an address without intent.
	e.Pay(over, payment.Native, paywatchtest.Units(over.AmountBaseUnits), "dup")
	e.Pay(over, payment.Native, big.NewInt(0), "dust")
	payLookahead(t, e, btc, big.NewInt(10000), "unknown") // 5.00 USD
	e.Chains[btc].Mine(1)
	e.Sync(btc)

	if got := e.Intent(late.ID); got.Status != "expired" || got.Transfers[0].Classification != "late" {
		t.Fatalf("late intent: %s %+v", got.Status, got.Transfers)
	}
	p := inbox(t, e, "")
	if len(p.Transfers) != 5 {
		t.Fatalf("inbox has %d transfers, want 5: %+v", len(p.Transfers), p.Transfers)
	}
	for i := 1; i < len(p.Transfers); i++ {
		a, b := p.Transfers[i-1], p.Transfers[i]
		if a.FirstSeenAt.Before(b.FirstSeenAt) {
			t.Fatalf("inbox is not newest first: %s before %s", a.ID, b.ID)
		}
	}
	// Cursor pagination walks the same list.
	var paged []string
	for q := "limit=2"; ; {
		pg := inbox(t, e, q)
		for _, tr := range pg.Transfers {
			paged = append(paged, tr.ID)
		}
		if pg.Next == nil {
			break
		}
		q = "limit=2&after=" + *pg.Next
	}
	if len(paged) != 5 || paged[0] != p.Transfers[0].ID || paged[4] != p.Transfers[4].ID {
		t.Fatalf("paged inbox %v, want %v", paged, p.Transfers)
	}
	lateTr := onlyTransfer(t, e, "late")
	overTr := onlyTransfer(t, e, "overpaid")
	dupTr := onlyTransfer(t, e, "duplicate")
	dustTr := onlyTransfer(t, e, "dust")
	unkTr := onlyTransfer(t, e, "unknown_address")

	// Refusals change nothing.
	refusals := []struct {
		name, id, scope string
		req             map[string]string
		status          int
		code            string
	}{
		{"no note", lateTr.ID, "finance", map[string]string{"action": "credit_intent", "intent_id": late.ID, "note": "  "}, 400, "invalid_request"},
		{"unknown action", lateTr.ID, "finance", map[string]string{"action": "credit", "note": "x"}, 400, "invalid_request"},
		{"unknown intent", lateTr.ID, "finance", map[string]string{"action": "credit_intent", "intent_id": "pi_nope", "note": "x"}, 404, "not_found"},
		{"unknown transfer", "tr_nope", "finance", map[string]string{"action": "ignore", "note": "x"}, 404, "not_found"},
		{"wrong scope", lateTr.ID, "storefront", map[string]string{"action": "ignore", "note": "x"}, 403, "forbidden"},
		{"refund without txid", dupTr.ID, "finance", map[string]string{"action": "refunded", "note": "x"}, 400, "invalid_request"},
		{"credit to a paid payable", dupTr.ID, "finance", map[string]string{"action": "credit_intent", "intent_id": over.ID, "note": "x"}, 409, "already_paid"},
		{"settled transfer", e.Intent(exact.ID).Transfers[0].ID, "finance", map[string]string{"action": "ignore", "note": "x"}, 409, "conflict"},
	}
	for _, c := range refusals {
		status, body := resolve(e, c.id, c.scope, c.req)
		if status != c.status || apiCode(body) != c.code {
			t.Fatalf("%s: %d %s, want %d %s", c.name, status, body, c.status, c.code)
		}
	}
	if n := len(inbox(t, e, "status=resolved").Transfers); n != 0 {
		t.Fatalf("%d resolved after refusals", n)
	}

	// credit_intent: the late payment pays the top-up, which is credited.
	status, body := resolve(e, lateTr.ID, "finance", map[string]string{"action": "credit_intent", "intent_id": late.ID, "note": "late by 3 min, customer emailed"})
	res := decodeInto[views.Transfer](t, body)
	if status != 200 || res.Resolution == nil || res.Resolution.Actor != "finance-key" || res.Resolution.Action != "credit_intent" ||
		res.Classification != "settles" || !res.Credited {
		t.Fatalf("credit_intent: %d %s", status, body)
	}
	if got := e.Intent(late.ID); got.Status != "paid" {
		t.Fatalf("credited intent: %s", got.Status)
	}
	if b := e.Balance("cust-l"); b.AvailableUSD != "100.00" {
		t.Fatalf("credited top-up balance %+v", b)
	}
	status, body = resolve(e, lateTr.ID, "finance", map[string]string{"action": "ignore", "note": "again"})
	if status != 409 || apiCode(body) != "conflict" {
		t.Fatalf("second resolution: %d %s", status, body)
	}

	// credit_account: the overpayment's surplus at the intent's rate, and the
	// unknown-address payment at the current quote.
	status, body = resolve(e, overTr.ID, "finance", map[string]string{"action": "credit_account", "account": "cust-o", "note": "surplus to balance"})
	if status != 200 {
		t.Fatalf("credit_account surplus: %d %s", status, body)
	}
	status, body = resolve(e, unkTr.ID, "finance", map[string]string{"action": "credit_account", "account": "cust-u", "note": "customer proved it"})
	if res := decodeInto[views.Transfer](t, body); status != 200 || res.Resolution == nil || res.Resolution.AmountUSD != "5.00" {
		t.Fatalf("credit_account unknown: %d %s", status, body)
	}
	if b := e.Balance("cust-o"); b.AvailableUSD != "2.50" {
		t.Fatalf("surplus credit: %+v", b)
	}
	if b := e.Balance("cust-u"); b.AvailableUSD != "5.00" {
		t.Fatalf("unknown-address credit: %+v", b)
	}
	// refunded and ignore.
	if status, body = resolve(e, dupTr.ID, "finance", map[string]string{"action": "refunded", "refund_txid": "ab12cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34", "note": "sent back"}); status != 200 {
		t.Fatalf("refunded: %d %s", status, body)
	}
	if status, body = resolve(e, dustTr.ID, "finance", map[string]string{"action": "ignore", "note": "address poisoning"}); status != 200 {
		t.Fatalf("ignore: %d %s", status, body)
	}

	if n := len(inbox(t, e, "").Transfers); n != 0 {
		t.Fatalf("%d transfers still unresolved", n)
	}
	if n := len(inbox(t, e, "status=resolved").Transfers); n != 5 {
		t.Fatalf("%d resolved transfers, want 5", n)
	}
	// Each resolution is one row with its actor, and one event.
	var rows, events, credits int
	ctx := context.Background()
	if err := e.Store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM resolutions WHERE actor = 'finance-key' AND note <> ''),
		(SELECT count(*) FROM events WHERE type = 'transfer.resolved'),
		(SELECT count(*) FROM ledger_entries WHERE type = 'credit' AND transfer_id IS NOT NULL)`).Scan(&rows, &events, &credits); err != nil {
		t.Fatal(err)
	}
	if rows != 5 || events != 5 || credits != 2 {
		t.Fatalf("%d resolutions, %d transfer.resolved events, %d transfer credits; want 5, 5, 2", rows, events, credits)
	}
	for _, acct := range []string{"cust-l", "cust-o", "cust-u"} {
		ledgerSums(t, e, acct)
	}
}

// TestReconciliationEveryClassification scripts every classification and
// checks that, per method, all transfers = settled + unresolved + resolved
// to the base unit, and that the CSV has exactly one row per transfer.
func TestReconciliationEveryClassification(t *testing.T) {
	e := paywatchtest.New(t)
	ctx := context.Background()
	btc, eth, ltc := payment.Bitcoin, payment.Ethereum, payment.Litecoin
	units := paywatchtest.Units

	settles := e.CreateIntent("order", "ORD-S", "", "100.00", "BTC")
	partial := e.CreateIntent("order", "ORD-P", "", "100.00", "BTC")
	over := e.CreateIntent("order", "ORD-O", "", "100.00", "BTC")
	lateA := e.CreateIntent("order", "ORD-LA", "", "50.00", "BTC")
	lateB := e.CreateIntent("order", "ORD-LB", "", "50.00", "BTC")
	usdt := e.CreateIntent("order", "ORD-T", "", "20.00", "USDT-ERC20")
	usdtWrong := e.CreateIntent("order", "ORD-W", "", "20.00", "USDT-ERC20")
	gone := e.CreateIntent("order", "ORD-X", "", "30.00", "LTC")

	e.Pay(settles, payment.Native, units(settles.AmountBaseUnits), "s")
	e.Pay(partial, payment.Native, new(big.Int).Div(units(partial.AmountBaseUnits), big.NewInt(2)), "p")
	e.Pay(over, payment.Native, new(big.Int).Add(units(over.AmountBaseUnits), big.NewInt(777)), "o")
	e.Pay(settles, payment.Native, units(settles.AmountBaseUnits), "dup")
	e.Pay(settles, payment.Native, big.NewInt(0), "dust")
	payLookahead(t, e, btc, big.NewInt(12345), "unknown")
	e.Pay(usdt, payment.USDT, units(usdt.AmountBaseUnits), "t")
	e.Pay(usdtWrong, payment.USDC, units(usdtWrong.AmountBaseUnits), "w")
	e.Chains[eth].Mine(12)
	e.Sync(eth)
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	// A mempool payment that vanishes unmined: orphaned, never paid anything.
	lk := e.Chains[ltc]
	key, err := addressKey(e, ltc, gone.Address)
	if err != nil {
		t.Fatal(err)
	}
	tx := chains.Transfer{TxID: chainstest.TxID("x"), Index: 0, Asset: payment.Native, Key: key, Address: gone.Address,
		Amount: units(gone.AmountBaseUnits)}
	lk.Broadcast(tx)
	e.Sync(ltc)
	lk.Drop(tx.TxID)
	e.Sync(ltc)

	// Past the deadlines: two late payments.
	e.Clock.Advance(31 * time.Minute)
	if _, err := e.Service.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	e.Pay(lateA, payment.Native, units(lateA.AmountBaseUnits), "la")
	e.Pay(lateB, payment.Native, units(lateB.AmountBaseUnits), "lb")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	// A paid top-up removed by a reorg.
	top := e.CreateIntent("topup", "TOP-V", "cust-v", "100.00", "BTC")
	e.Pay(top, payment.Native, units(top.AmountBaseUnits), "v")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	if got := e.Intent(top.ID); got.Status != "paid" {
		t.Fatalf("top-up: %s", got.Status)
	}
	e.Chains[btc].Reorg(2, 1, false)
	e.Sync(btc)

	classes := map[string]int{}
	rows, err := e.Store.Pool().Query(ctx, `SELECT classification, count(*) FROM transfers GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		var n int
		_ = rows.Scan(&c, &n)
		classes[c] = n
	}
	rows.Close()
	for _, c := range []string{"settles", "partial", "overpaid", "late", "duplicate", "wrong_asset", "unknown_address", "dust", "reverted"} {
		if classes[c] == 0 {
			t.Fatalf("no %s transfer in the scenario: %v", c, classes)
		}
	}
	var orphanedPartial int
	_ = e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM transfers WHERE status = 'orphaned' AND classification <> 'reverted'`).Scan(&orphanedPartial)
	if orphanedPartial != 1 {
		t.Fatalf("%d orphaned transfers that never paid, want 1 (the vanished LTC one)", orphanedPartial)
	}

	// Finance decides on some.
	lateTr := e.Intent(lateA.ID).Transfers[0]
	if s, b := resolve(e, lateTr.ID, "finance", map[string]string{"action": "credit_intent", "intent_id": lateA.ID, "note": "ok"}); s != 200 {
		t.Fatalf("credit late: %d %s", s, b)
	}
	if s, b := resolve(e, onlyTransfer(t, e, "dust").ID, "finance", map[string]string{"action": "ignore", "note": "poisoning"}); s != 200 {
		t.Fatalf("ignore dust: %d %s", s, b)
	}
	if s, b := resolve(e, onlyTransfer(t, e, "unknown_address").ID, "finance", map[string]any{"action": "credit_account", "account": "cust-u", "usd_per_unit": "40000", "note": "proved",
		"override": map[string]string{"reason": "the rate the customer paid at"}}); s != 200 {
		t.Fatalf("credit unknown: %d %s", s, b)
	}
	if s, b := resolve(e, onlyTransfer(t, e, "wrong_asset").ID, "finance", map[string]string{"action": "refunded", "refund_txid": "0xabc0000000000000000000000000000000000000000000000000000000000000", "note": "sent back"}); s != 200 {
		t.Fatalf("refund wrong asset: %d %s", s, b)
	}

	from, to := "2026-11-01", "2026-12-01"
	status, body := e.Do("GET", "/v1/reports/reconciliation?from="+from+"&to="+to+"&format=json", "finance", nil)
	if status != 200 {
		t.Fatalf("report: %d %s", status, body)
	}
	rep := decodeInto[reports.Reconciliation](t, body)
	num := func(s string) *big.Int { return paywatchtest.Units(s) }
	// Independent sums from the database, per method.
	type dbSums struct{ total, settledPaid, resolved, excluded *big.Int }
	db := map[string]dbSums{}
	for _, m := range payment.Methods {
		var total, resolved, excluded, paid string
		err := e.Store.Pool().QueryRow(ctx, `SELECT
			coalesce(sum(t.amount) FILTER (WHERE NOT (t.status = 'orphaned' AND t.classification <> 'reverted')), 0)::text,
			coalesce(sum(t.amount) FILTER (WHERE r.transfer_id IS NOT NULL AND t.classification NOT IN ('settles', 'overpaid')), 0)::text,
			coalesce(sum(t.amount) FILTER (WHERE t.status = 'orphaned' AND t.classification <> 'reverted'), 0)::text,
			(SELECT coalesce(sum(amount), 0)::text FROM intents WHERE method = $3 AND status = 'paid')
			FROM transfers t LEFT JOIN resolutions r ON r.transfer_id = t.id WHERE t.network = $1 AND t.asset = $2`,
			string(m.Network), string(m.Asset), string(m.Method)).Scan(&total, &resolved, &excluded, &paid)
		if err != nil {
			t.Fatal(err)
		}
		db[string(m.Method)] = dbSums{num(total), num(paid), num(resolved), num(excluded)}
	}
	seen := map[string]bool{}
	for _, tot := range rep.Totals {
		t.Logf("%s: %d transfers, total %s = settled %s + unresolved %s + resolved %s; excluded %d (%s)", tot.Method, tot.Transfers,
			tot.Total, tot.Settled, tot.Unresolved, tot.Resolved, tot.ExcludedTransfers, tot.Excluded)
		seen[tot.Method] = true
		sum := new(big.Int).Add(num(tot.Settled), num(tot.Unresolved))
		sum.Add(sum, num(tot.Resolved))
		if sum.Cmp(num(tot.Total)) != 0 {
			t.Fatalf("%s: settled %s + unresolved %s + resolved %s != total %s", tot.Method, tot.Settled, tot.Unresolved, tot.Resolved, tot.Total)
		}
		d := db[tot.Method]
		if num(tot.Total).Cmp(d.total) != 0 || num(tot.Settled).Cmp(d.settledPaid) != 0 ||
			num(tot.Resolved).Cmp(d.resolved) != 0 || num(tot.Excluded).Cmp(d.excluded) != 0 {
			t.Fatalf("%s: report %+v, database total %s settled (paid intents) %s resolved %s excluded %s",
				tot.Method, tot, d.total, d.settledPaid, d.resolved, d.excluded)
		}
	}
	for _, m := range []string{"BTC", "USDT-ERC20", "USDC-ERC20", "LTC"} {
		if !seen[m] {
			t.Fatalf("no totals for %s: %+v", m, rep.Totals)
		}
	}
	// BTC's surplus is unresolved: overpaid by 777 sat, partial, late B,
	// duplicate and the reverted top-up.
	var btcTot reports.MethodTotals
	for _, tot := range rep.Totals {
		if tot.Method == "BTC" {
			btcTot = tot
		}
	}
	wantUnres := new(big.Int).Add(big.NewInt(777), new(big.Int).Div(units(partial.AmountBaseUnits), big.NewInt(2)))
	wantUnres.Add(wantUnres, units(lateB.AmountBaseUnits))
	wantUnres.Add(wantUnres, units(settles.AmountBaseUnits))
	wantUnres.Add(wantUnres, units(top.AmountBaseUnits))
	if num(btcTot.Unresolved).Cmp(wantUnres) != 0 {
		t.Fatalf("BTC unresolved %s, want %s", btcTot.Unresolved, wantUnres)
	}

	// CSV: exactly one row per transfer.
	status, body = e.Do("GET", "/v1/reports/reconciliation?"+url.Values{"from": {from}, "to": {to}, "format": {"csv"}}.Encode(), "finance", nil)
	if status != 200 {
		t.Fatalf("csv: %d %s", status, body)
	}
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs[1:] {
		ids = append(ids, r[0])
	}
	var want []string
	rows, err = e.Store.Pool().Query(ctx, `SELECT id FROM transfers`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		want = append(want, id)
	}
	rows.Close()
	sort.Strings(ids)
	sort.Strings(want)
	if recs[0][0] != "transfer_id" || strings.Join(ids, ",") != strings.Join(want, ",") || len(rep.Rows) != len(want) {
		t.Fatalf("csv has %d rows %v, transfers table %d %v", len(ids), ids, len(want), want)
	}
	// Outside the window nothing is reported.
	status, body = e.Do("GET", "/v1/reports/reconciliation?from=2026-12-01&to=2027-01-01", "finance", nil)
	if status != 200 || len(decodeInto[reports.Reconciliation](t, body).Rows) != 0 {
		t.Fatalf("empty window: %d %s", status, body)
	}
	if status, _ = e.Do("GET", "/v1/reports/reconciliation?from=2026-11-01&to=2026-12-01", "storefront", nil); status != 403 {
		t.Fatalf("storefront key on the report: %d", status)
	}
}

// addressKey returns the binary key of one of our addresses.
func addressKey(e *paywatchtest.Env, n payment.Network, addr string) ([]byte, error) {
	var key []byte
	err := e.Store.Pool().QueryRow(context.Background(), `SELECT key FROM addresses WHERE network = $1 AND address = $2`, string(n), addr).Scan(&key)
	return key, err
}
