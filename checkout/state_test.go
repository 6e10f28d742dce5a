package checkout_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

var deadline = time.Date(2026, 11, 30, 14, 30, 0, 0, time.UTC)

// btcIntent is a 0.002 BTC intent (200000 sat) needing 2 confirmations.
func btcIntent(status payment.IntentStatus, received string, trs ...views.Transfer) views.Intent {
	return views.Intent{ID: "pi_X", Kind: payment.Order, Reference: "ORD-1", Method: "BTC", Network: "bitcoin", Asset: "BTC",
		AmountUSD: "100.00", Amount: "0.00200000", AmountBaseUnits: "200000", ReceivedBaseUnits: received,
		ExpiresAt: deadline, Status: status, ConfirmationsRequired: 2, Transfers: trs}
}

func tr(class payment.Classification, units string, conf int64, mined bool) views.Transfer {
	t := views.Transfer{Network: "bitcoin", Asset: "native", AmountBaseUnits: units, Classification: class,
		Confirmations: conf, Required: 2, Status: payment.TransferConfirming}
	if mined {
		h := int64(100)
		t.BlockHeight = &h
	} else {
		t.Status = payment.TransferPending
	}
	return t
}

// StateOf's phases, from what the matcher decided and the time: each of
// the page's states, with its amounts exact in the coin.
func TestStateOf(t *testing.T) {
	before, after := deadline.Add(-time.Minute), deadline.Add(time.Second)
	eth := views.Intent{Method: "ETH", Network: "ethereum", Asset: "ETH", AmountBaseUnits: "10000000000000000", ReceivedBaseUnits: "0",
		ExpiresAt: deadline, Status: payment.IntentAwaiting, ConfirmationsRequired: 3,
		Transfers: []views.Transfer{{Network: "ethereum", Asset: "USDT", AmountBaseUnits: "25000000", Classification: payment.WrongAsset}}}
	orphan := tr(payment.Settles, "200000", 0, false)
	orphan.Status = payment.TransferOrphaned
	cases := []struct {
		name string
		v    views.Intent
		now  time.Time
		want checkout.State
	}{
		{"waiting", btcIntent(payment.IntentAwaiting, "0"), before,
			checkout.State{Phase: checkout.Waiting, Open: true, CanReport: true, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC"}},
		{"deadline passed before the sweep", btcIntent(payment.IntentAwaiting, "0"), after,
			checkout.State{Phase: checkout.Expired, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC"}},
		{"underpaid before the deadline", btcIntent(payment.IntentDetected, "50000", tr(payment.Partial, "50000", 1, true)), before,
			checkout.State{Phase: checkout.Underpaid, Open: true, CanReport: true, Required: 2, Received: "0.0005", Missing: "0.0015", Asset: "BTC"}},
		{"short at the deadline, not swept yet", btcIntent(payment.IntentDetected, "50000", tr(payment.Partial, "50000", 1, true)), after,
			checkout.State{Phase: checkout.Review, Reason: checkout.ReasonShort, Required: 2, Received: "0.0005", Missing: "0.0015", Asset: "BTC"}},
		{"short: underpaid", btcIntent(payment.IntentUnderpaid, "50000", tr(payment.Partial, "50000", 3, true)), after,
			checkout.State{Phase: checkout.Review, Reason: checkout.ReasonShort, Required: 2, Received: "0.0005", Missing: "0.0015", Asset: "BTC"}},
		{"in the mempool", btcIntent(payment.IntentDetected, "200000", tr(payment.Settles, "200000", 0, false)), before,
			checkout.State{Phase: checkout.Confirming, Pending: true, Required: 2, Received: "0.002", Asset: "BTC"}},
		{"one of two, seen before the deadline, read after it", btcIntent(payment.IntentDetected, "200000", tr(payment.Settles, "150000", 2, true), tr(payment.Settles, "50000", 1, true)), after,
			checkout.State{Phase: checkout.Confirming, Confirmations: 1, Required: 2, Received: "0.002", Asset: "BTC"}},
		{"paid", btcIntent(payment.IntentPaid, "200000", tr(payment.Settles, "200000", 2, true)), after,
			checkout.State{Phase: checkout.Paid, Confirmations: 2, Required: 2, Received: "0.002", Asset: "BTC"}},
		{"paid, overpaid", func() views.Intent {
			v := btcIntent(payment.IntentPaid, "250001", tr(payment.Overpaid, "250001", 5, true))
			v.Overpaid = true
			return v
		}(), before,
			checkout.State{Phase: checkout.Paid, Confirmations: 5, Required: 2, Received: "0.00250001", Asset: "BTC",
				Notes: []checkout.Note{{Reason: checkout.ReasonOverpaid, Amount: "0.00050001", Asset: "BTC"}}}},
		{"paid, then a duplicate", btcIntent(payment.IntentPaid, "200000", tr(payment.Settles, "200000", 3, true), tr(payment.Duplicate, "200000", 1, true)), after,
			checkout.State{Phase: checkout.Paid, Confirmations: 3, Required: 2, Received: "0.002", Asset: "BTC",
				Notes: []checkout.Note{{Reason: checkout.ReasonDuplicate, Amount: "0.002", Asset: "BTC"}}}},
		{"expired", btcIntent(payment.IntentExpired, "0"), after,
			checkout.State{Phase: checkout.Expired, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC"}},
		{"paid late", btcIntent(payment.IntentExpired, "0", tr(payment.Late, "200000", 0, false)), after,
			checkout.State{Phase: checkout.Review, Reason: checkout.ReasonLate, Required: 2, Received: "0.002", Missing: "0.002", Asset: "BTC"}},
		{"a vanished payment counts for nothing", btcIntent(payment.IntentAwaiting, "0", orphan), before,
			checkout.State{Phase: checkout.Waiting, Open: true, CanReport: true, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC"}},
		{"wrong asset while open", eth, before,
			checkout.State{Phase: checkout.Review, Reason: checkout.ReasonWrongAsset, Open: true, CanReport: true, Required: 3, Received: "25", Missing: "0.01", Asset: "USDT"}},
		{"wrong asset after the deadline", func() views.Intent { v := eth; v.Status = payment.IntentExpired; return v }(), after,
			checkout.State{Phase: checkout.Review, Reason: checkout.ReasonWrongAsset, Required: 3, Received: "25", Missing: "0.01", Asset: "USDT"}},
		{"paid elsewhere: a duplicate while detected", btcIntent(payment.IntentDetected, "0", tr(payment.Duplicate, "200000", 1, true)), before,
			checkout.State{Phase: checkout.Review, Reason: checkout.ReasonDuplicate, Required: 2, Received: "0.002", Missing: "0.002", Asset: "BTC"}},
		{"renewed", func() views.Intent {
			v := btcIntent(payment.IntentSuperseded, "0", tr(payment.Late, "1000", 1, true))
			return v
		}(), before,
			checkout.State{Phase: checkout.Renewed, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC",
				Notes: []checkout.Note{{Reason: checkout.ReasonLate, Amount: "0.00001", Asset: "BTC"}}}},
		{"reverted", btcIntent(payment.IntentReverted, "0"), before,
			checkout.State{Phase: checkout.Reverted, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC"}},
		{"reported", func() views.Intent { v := btcIntent(payment.IntentAwaiting, "0"); v.ReportedAt = &before; return v }(), before,
			checkout.State{Phase: checkout.Waiting, Open: true, CanReport: true, Reported: true, Required: 2, Received: "0", Missing: "0.002", Asset: "BTC"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkout.StateOf(c.v, c.now); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("StateOf:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}
