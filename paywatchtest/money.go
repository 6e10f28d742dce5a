package paywatchtest

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/finance"
)

// Balance is the account's balance as the API answers it.
func (e *Env) Balance(account string) finance.BalanceView {
	e.T.Helper()
	status, body := e.Do("GET", "/v1/accounts/"+account+"/balance", "storefront", nil)
	if status != 200 {
		e.T.Fatalf("balance: %d %s", status, body)
	}
	var b finance.BalanceView
	if err := json.Unmarshal(body, &b); err != nil {
		e.T.Fatal(err)
	}
	return b
}

// CheckLedger asserts that the account's balance is the sum of its
// entries and that every entry's balance_after chains from the one
// before, never below zero. A reversal takes what it recovered; a
// recovery takes its amount. It returns the entries' types in order.
func (e *Env) CheckLedger(account string) []string {
	e.T.Helper()
	t := e.T
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

// IntentEvents are the types of an intent's events, in order.
func (e *Env) IntentEvents(intentID string) []string {
	e.T.Helper()
	return e.eventTypes(`SELECT type FROM events WHERE intent_id = $1 ORDER BY seq`, intentID)
}

// TransferEvents are the types of a transfer's events, in order.
func (e *Env) TransferEvents(transferID string) []string {
	e.T.Helper()
	return e.eventTypes(`SELECT type FROM events WHERE transfer_id = $1 ORDER BY seq`, transferID)
}

func (e *Env) eventTypes(query, id string) []string {
	e.T.Helper()
	rows, err := e.Store.Pool().Query(context.Background(), query, id)
	if err != nil {
		e.T.Fatal(err)
	}
	types, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		e.T.Fatal(err)
	}
	return types
}
