package intents_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// Issue 32 item 2: a transaction mined again after a reorg executes against
// other state (a router that forwards what a swap gave) and moves another
// amount under the same key. What the best chain moved is the transfer.

// internalKey is the key of the first internal ETH transfer of a
// transaction's trace (chains/evm: -2 - k for frame k).
const internalKey = -2

// reexecute replaces the chain's last depth blocks by depth+1 blocks whose
// first holds the given transfers (the transaction mined again, executed
// again), and scans.
func reexecute(e *paywatchtest.Env, n payment.Network, depth int, again ...chains.Transfer) {
	blocks := make([][]chains.Transfer, depth+1)
	blocks[0] = again
	reorgTo(e, n, depth, blocks)
}

// The payment is seen (detected, confirming) when its block leaves the
// chain; mined again, the transaction forwards 60 %: the intent ends
// underpaid with one partial transfer (it used to be paid by the losing
// branch's amount). Paid before the reorg, it is reverted, received 60 %.
func TestReexecutedInternalTransferPaysWhatTheBestChainPaid(t *testing.T) {
	for _, paid := range []bool{false, true} {
		name := "confirming"
		if paid {
			name = "paid"
		}
		t.Run(name, func(t *testing.T) {
			e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
			eth := payment.Ethereum
			x := e.CreateIntent("order", "ORD-REEXEC", "cust-reexec", "100.00", "ETH")
			full := paywatchtest.Units(x.AmountBaseUnits)
			tr := e.Chains[eth].Send(chainstest.TxID("reexec-1"), internalKey, payment.Native, keyOf(t, e, x), x.Address, full)
			depth, want := 1, "detected"
			if paid {
				depth, want = 2, "paid"
			}
			e.Chains[eth].Mine(depth)
			e.Sync(eth)
			v := e.Intent(x.ID)
			if string(v.Status) != want || len(v.Transfers) != 1 {
				t.Fatalf("after the payment: %s %+v, want %s", v.Status, v.Transfers, want)
			}
			first := v.Transfers[0]

			// The same transaction, mined again in the new branch, forwards 60 %.
			again := tr
			again.Amount = pct(x.AmountBaseUnits, 60)
			reexecute(e, eth, depth, again)
			e.Chains[eth].Mine(2)
			e.Sync(eth)
			v = e.Intent(x.ID)
			if len(v.Transfers) != 1 {
				t.Fatalf("after the re-execution: %d transfers %+v, want the one", len(v.Transfers), v.Transfers)
			}
			got := v.Transfers[0]
			if got.ID != first.ID || got.AmountBaseUnits != again.Amount.String() || !got.FirstSeenAt.Equal(first.FirstSeenAt) {
				t.Fatalf("transfer after the re-execution: id %s amount %s first seen %s; want id %s amount %s first seen %s",
					got.ID, got.AmountBaseUnits, got.FirstSeenAt, first.ID, again.Amount, first.FirstSeenAt)
			}
			if v.Status == "paid" || v.ReceivedBaseUnits != again.Amount.String() {
				t.Fatalf("after the re-execution: %s received %s, want not paid, received %s", v.Status, v.ReceivedBaseUnits, again.Amount)
			}
			e.Clock.Advance(2 * time.Hour)
			if _, err := e.Service.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			v = e.Intent(x.ID)
			want = "underpaid"
			if paid {
				want = "reverted" // paid once, then a reorg took part of it (DESIGN)
			}
			if string(v.Status) != want || v.Transfers[0].Classification != "partial" || v.ReceivedBaseUnits != again.Amount.String() {
				t.Fatalf("after the deadline: %s, transfer %s, received %s; want %s, partial, %s",
					v.Status, v.Transfers[0].Classification, v.ReceivedBaseUnits, want, again.Amount)
			}
			_, unres, _ := recon(t, e, "ETH")
			if unres != again.Amount.String() {
				t.Fatalf("reconciliation unresolved %s, want the best chain's %s", unres, again.Amount)
			}
			// A full rescan gives the same books.
			before := booksOf(t, e, x.ID, "", "ETH")
			if err := e.Store.RequestRescan(context.Background(), "ethereum", 1, e.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			e.Sync(eth)
			sameBooks(t, "re-executed transfer, full rescan", before, booksOf(t, e, x.ID, "", "ETH"))
		})
	}
}

// A top-up overpaid by 50 %, its surplus credited to the account; the
// transaction, executed again, pays exactly the amount: the surplus credit
// is reversed, its decision voided, the top-up's credit stands.
func TestReexecutedTransferUndoesFinanceDecisionsOnTheOldContent(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	eth := payment.Ethereum
	x := e.CreateIntent("topup", "TOP-REEXEC", "cust-rx", "100.00", "ETH")
	tr := e.Chains[eth].Send(chainstest.TxID("reexec-2"), internalKey, payment.Native, keyOf(t, e, x), x.Address, pct(x.AmountBaseUnits, 150))
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	id := transferOf(t, e.Intent(x.ID), tr.TxID).ID
	resolveOK(t, e, id, map[string]string{"action": "credit_account", "account": "cust-rx", "note": "surplus to balance"})
	if b := e.Balance("cust-rx"); b.AvailableUSD != "150.00" {
		t.Fatalf("balance after the surplus credit: %s", b.AvailableUSD)
	}
	again := tr
	again.Amount = paywatchtest.Units(x.AmountBaseUnits)
	reexecute(e, eth, 2, again)
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	v := e.Intent(x.ID)
	got := transferOf(t, v, tr.TxID)
	if v.Status != "paid" || v.Overpaid || got.ID != id || got.AmountBaseUnits != again.Amount.String() || got.Classification != "settles" {
		t.Fatalf("after the re-execution: %s overpaid %v, transfer %s %s %s", v.Status, v.Overpaid, got.ID, got.AmountBaseUnits, got.Classification)
	}
	if b := e.Balance("cust-rx"); b.AvailableUSD != "100.00" {
		t.Fatalf("balance after the re-execution: %s, want 100.00 (the surplus credit reversed)", b.AvailableUSD)
	}
	if inbox(t, e)[id] {
		t.Fatalf("the transfer, now settling in full, is in the unresolved inbox")
	}
	ft := financeTransfer(t, e, id)
	if ft.Resolution != nil {
		t.Fatalf("the surplus decision on the old content is still live: %+v", ft.Resolution)
	}
	settled, unres, resolved := recon(t, e, "ETH")
	if settled != again.Amount.String() || unres != "0" || resolved != "0" {
		t.Fatalf("reconciliation settled %s unresolved %s resolved %s; want %s, 0, 0", settled, unres, resolved, again.Amount)
	}
	e.CheckLedger("cust-rx")
}

// The transaction, executed again, pays nothing to our address: the
// transfer stays off the books (orphaned), the intent is not paid.
func TestReexecutedTransactionPayingNothingLeavesTheBooks(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithConfig(smallDepths))
	eth := payment.Ethereum
	x := e.CreateIntent("order", "ORD-REEXEC0", "cust-rx0", "100.00", "ETH")
	e.Chains[eth].Send(chainstest.TxID("reexec-3"), internalKey, payment.Native, keyOf(t, e, x), x.Address, paywatchtest.Units(x.AmountBaseUnits))
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	reexecute(e, eth, 2)
	e.Chains[eth].Mine(2)
	e.Sync(eth)
	v := e.Intent(x.ID)
	if v.Status == "paid" || v.ReceivedBaseUnits != "0" || len(v.Transfers) != 1 || v.Transfers[0].Status != "orphaned" {
		t.Fatalf("after a re-execution paying nothing: %s received %s %+v", v.Status, v.ReceivedBaseUnits, v.Transfers)
	}
}

// financeTransfer reads a transfer with finance's key.
func financeTransfer(t *testing.T, e *paywatchtest.Env, id string) views.Transfer {
	t.Helper()
	status, body := e.Do("GET", "/v1/transfers/"+id, "finance", nil)
	if status != 200 {
		t.Fatalf("get transfer: %d %s", status, body)
	}
	var v views.Transfer
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
