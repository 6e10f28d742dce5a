package store_test

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// The views of an intent (with its transfers and its network's node
// height) and of a transfer (with the node height) answer what the reads
// they fold answer, in one round trip each, inside a transaction too; an
// unknown id is ErrNotFound. NodeHeights is NodeHeight for every network
// at once, and a payable's intents locked with their transfers is one
// round trip (issue 37 item 3).
func TestViewsAnswerWhatTheReadsTheyFoldDo(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	v := e.CreateIntent("order", "ORD-VIEW", "", "100.00", "BTC")
	half := new(big.Int).Rsh(paywatchtest.Units(v.AmountBaseUnits), 1)
	e.Pay(v, payment.Native, half, "view1")
	e.Pay(v, payment.Native, half, "view2")
	e.Sync(payment.Bitcoin)
	e.Chains[payment.Bitcoin].Mine(1)
	e.Sync(payment.Bitcoin)

	var mu sync.Mutex
	sent := 0
	st, err := store.OpenWith(ctx, e.Config.DatabaseURL, store.Options{Trace: func(string) { mu.Lock(); sent++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	trips := func(f func()) int {
		t.Helper()
		mu.Lock()
		before := sent
		mu.Unlock()
		f()
		mu.Lock()
		defer mu.Unlock()
		return sent - before
	}

	wantIn, err := e.Store.GetIntent(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantTrs, err := e.Store.TransfersByIntent(ctx, v.ID)
	if err != nil || len(wantTrs) != 2 {
		t.Fatalf("transfers %d %v", len(wantTrs), err)
	}
	wantTip, err := e.Store.NodeHeight(ctx, "bitcoin")
	if err != nil || wantTip == 0 {
		t.Fatalf("tip %d %v", wantTip, err)
	}
	check := func(where string, in store.Intent, trs []store.Transfer, tip int64, err error) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(in, wantIn) || !reflect.DeepEqual(trs, wantTrs) || tip != wantTip {
			t.Fatalf("%s: IntentView %+v %+v %d %v\nwant %+v %+v %d", where, in, trs, tip, err, wantIn, wantTrs, wantTip)
		}
	}
	var in store.Intent
	var trs []store.Transfer
	var tip int64
	if n := trips(func() { in, trs, tip, err = st.IntentView(ctx, v.ID) }); n != 1 {
		t.Fatalf("IntentView took %d round trips, want 1", n)
	}
	check("outside a transaction", in, trs, tip, err)
	if err := st.InTx(ctx, func(tx *store.Tx) error {
		in, trs, tip, err := tx.IntentView(ctx, v.ID)
		check("inside a transaction", in, trs, tip, err)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.IntentView(ctx, "pi_nosuchintent"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown intent: %v, want ErrNotFound", err)
	}

	wantTr, err := e.Store.GetTransfer(ctx, wantTrs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	var tr store.Transfer
	if n := trips(func() { tr, tip, err = st.TransferView(ctx, wantTr.ID) }); n != 1 {
		t.Fatalf("TransferView took %d round trips, want 1", n)
	}
	if err != nil || !reflect.DeepEqual(tr, wantTr) || tip != wantTip {
		t.Fatalf("TransferView %+v %d %v\nwant %+v %d", tr, tip, err, wantTr, wantTip)
	}
	if _, _, err := st.TransferView(ctx, "tr_nosuchtransfer"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown transfer: %v, want ErrNotFound", err)
	}

	// A payable's intents locked and their transfers: one round trip.
	if err := st.InTx(ctx, func(tx *store.Tx) error {
		wantIns, err := tx.IntentsOfPayableForUpdate(ctx, wantIn.PayableID)
		if err != nil || len(wantIns) != 1 {
			t.Fatalf("intents of the payable: %d %v", len(wantIns), err)
		}
		wantAll, err := tx.TransfersOfIntents(ctx, []string{wantIns[0].ID})
		if err != nil {
			return err
		}
		var ins []store.Intent
		var all []store.Transfer
		if n := trips(func() { ins, all, err = tx.IntentsAndTransfersOfPayableForUpdate(ctx, wantIn.PayableID) }); n != 1 {
			t.Fatalf("IntentsAndTransfersOfPayableForUpdate took %d round trips, want 1", n)
		}
		if err != nil || !reflect.DeepEqual(ins, wantIns) || !reflect.DeepEqual(all, wantAll) {
			t.Fatalf("IntentsAndTransfersOfPayableForUpdate %+v %+v %v\nwant %+v %+v", ins, all, err, wantIns, wantAll)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	tips, err := st.NodeHeights(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"bitcoin", "litecoin", "tron"} {
		one, err := e.Store.NodeHeight(ctx, n)
		if err != nil || tips[n] != one {
			t.Fatalf("%s: NodeHeights %d, NodeHeight %d %v", n, tips[n], one, err)
		}
	}
}

// StartBlocksWith reads, in the batch's round trip, the addresses the
// batch pays (as AddressesByKeys reads them) or, for a batch that records
// no transfer, promotes what reached its confirmations (as ConfirmUpTo
// does); the transfers it orphaned and those it promoted are read back
// together (issue 37 item 3).
func TestStartBlocksWithReadsWhatItsReadsDo(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	v := e.CreateIntent("order", "ORD-START", "", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "start1")
	e.Sync(payment.Bitcoin)
	trs, err := e.Store.TransfersByIntent(ctx, v.ID)
	if err != nil || len(trs) != 1 || trs[0].Status != "confirming" || trs[0].BlockHeight == nil {
		t.Fatalf("the payment: %+v %v", trs, err)
	}
	tr := trs[0]
	cur, err := e.Store.GetCursor(ctx, "bitcoin")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sent := 0
	st, err := store.OpenWith(ctx, e.Config.DatabaseURL, store.Options{Trace: func(string) { mu.Lock(); sent++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	count := func() int { mu.Lock(); defer mu.Unlock(); return sent }
	next := []store.BlockRef{{Height: cur.Height + 1, Hash: "next", Parent: cur.Hash}}
	at := []time.Time{e.Clock.Now()}
	// The tip that gives the payment its confirmations.
	tip := *tr.BlockHeight + int64(tr.ConfirmationsRequired) - 1
	rollback := errors.New("rolled back")
	run := func(r store.StartReads, check func(tx *store.Tx, res store.StartResult)) {
		t.Helper()
		err := st.InTx(ctx, func(tx *store.Tx) error {
			res, err := tx.StartBlocksWith(ctx, "bitcoin", max(tip, cur.Height+1), 0, next, at, 0, e.Clock.Now(), r)
			if err != nil {
				return err
			}
			if res.Cursor.Height != cur.Height || res.Cursor.Hash != cur.Hash || len(res.Replaced) != 0 {
				t.Fatalf("cursor %+v, replaced %+v", res.Cursor, res.Replaced)
			}
			check(tx, res)
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
	}
	before := count()
	run(store.StartReads{Confirm: true}, func(tx *store.Tx, res store.StartResult) {
		if n := count() - before; n != 2 {
			t.Fatalf("the batch and its promoted transfers took %d round trips, want 2", n)
		}
		if len(res.Confirmed) != 1 || res.Confirmed[0].ID != tr.ID || res.Confirmed[0].Status != "confirmed" || res.Known != nil {
			t.Fatalf("promoted %+v, known %v", res.Confirmed, res.Known)
		}
	})
	// The same batch with ConfirmUpTo after it promotes the same.
	if err := st.InTx(ctx, func(tx *store.Tx) error {
		if _, _, err := tx.StartBlocks(ctx, "bitcoin", max(tip, cur.Height+1), 0, next, at, 0, e.Clock.Now()); err != nil {
			return err
		}
		got, err := tx.ConfirmUpTo(ctx, "bitcoin", max(tip, cur.Height+1), 0, e.Clock.Now())
		if err != nil || len(got) != 1 || got[0].ID != tr.ID {
			t.Fatalf("ConfirmUpTo: %+v %v", got, err)
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	before = count()
	run(store.StartReads{Keys: [][]byte{tr.AddressKey, []byte("not ours")}}, func(tx *store.Tx, res store.StartResult) {
		if n := count() - before; n != 1 {
			t.Fatalf("the batch and its addresses took %d round trips, want 1", n)
		}
		want, err := tx.AddressesByKeys(ctx, "bitcoin", [][]byte{tr.AddressKey, []byte("not ours")})
		if err != nil || len(want) != 1 || !reflect.DeepEqual(res.Known, want) || res.Known[string(tr.AddressKey)].IntentID != v.ID || res.Confirmed != nil {
			t.Fatalf("known %+v, AddressesByKeys %+v (%v), promoted %+v", res.Known, want, err, res.Confirmed)
		}
	})
}
