package finance_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents/intentstest"
)

// The helpers of intents' money-core tests (money_core_test.go) these
// finance tests share.

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func resolveTransfer(e *intentstest.Env, id string, req map[string]string) (int, []byte) {
	return e.Do("POST", "/v1/transfers/"+id+"/resolve", "finance", req)
}

func balanceOf(t *testing.T, e *intentstest.Env, account string) finance.BalanceView {
	t.Helper()
	status, body := e.Do("GET", "/v1/accounts/"+account+"/balance", "storefront", nil)
	if status != 200 {
		t.Fatalf("balance: %d %s", status, body)
	}
	var b finance.BalanceView
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLedger asserts that the account's balance is the sum of its entries
// and that every entry's balance_after chains from the one before, never
// below zero. A reversal takes what it recovered; a recovery takes its
// amount.
func checkLedger(t *testing.T, e *intentstest.Env, account string) []string {
	t.Helper()
	rows, err := e.Store.Pool().Query(context.Background(), `SELECT type, amount_cents, unrecovered_cents, balance_after_cents
		FROM ledger_entries WHERE account = $1 ORDER BY seq`, account)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var running int64
	var types []string
	for rows.Next() {
		var typ string
		var amt, unrec, after int64
		if err := rows.Scan(&typ, &amt, &unrec, &after); err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "credit":
			running += amt
		case "debit", "recovery":
			running -= amt
		case "reversal":
			running -= amt - unrec
		default:
			t.Fatalf("entry type %q", typ)
		}
		if running < 0 || running != after {
			t.Fatalf("account %s: running balance %d, entry %s says %d", account, running, typ, after)
		}
		types = append(types, typ)
	}
	var bal int64
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT balance_cents FROM accounts WHERE account = $1`, account).Scan(&bal); err != nil {
		t.Fatal(err)
	}
	if bal != running {
		t.Fatalf("account %s: balance %d, entries sum to %d", account, bal, running)
	}
	return types
}
