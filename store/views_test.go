package store_test

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"sync"
	"testing"

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
