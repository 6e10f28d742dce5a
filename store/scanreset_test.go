package store_test

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/store"
)

// The sandbox's reset of a replaced chain: the highest transfer height is
// found per network, and forgetting the scan state deletes that network's
// cursor and block refs only, keeping its transfers and other networks'
// state. (Its own database: the effect is observed after commit.)
func TestForgetScanStateKeepsTransfersAndOtherNetworks(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	h := int64(120)
	err := s.InTx(ctx, func(tx *store.Tx) error {
		for _, n := range []string{"bitcoin", "litecoin"} {
			if err := tx.InitCursor(ctx, n, 100, "c100", now); err != nil {
				return err
			}
			if err := tx.PutBlock(ctx, n, store.BlockRef{Height: 100, Hash: "c100", Parent: "c99"}, now); err != nil {
				return err
			}
		}
		_, _, err := tx.UpsertTransfer(ctx, store.Transfer{ID: "tr_reset", Network: "bitcoin", TxID: "aa", Index: 0,
			Asset: "native", Address: "a", AddressKey: []byte("a"), Amount: big.NewInt(5), FirstSeenAt: now,
			BlockHeight: &h, BlockHash: "bb", Status: "confirming", ConfirmationsRequired: 2, Classification: "partial", CreatedAt: now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, func(tx *store.Tx) error {
		if got, ok, err := tx.MaxTransferHeight(ctx, "bitcoin"); err != nil || !ok || got != h {
			t.Errorf("bitcoin max transfer height: %d %v %v, want %d", got, ok, err, h)
		}
		if got, ok, err := tx.MaxTransferHeight(ctx, "litecoin"); err != nil || ok {
			t.Errorf("litecoin max transfer height: %d %v %v, want none", got, ok, err)
		}
		return tx.ForgetScanState(ctx, "bitcoin")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCursor(ctx, "bitcoin"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bitcoin cursor after the reset: %v, want not found", err)
	}
	if _, err := s.BlockAt(ctx, "bitcoin", 100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bitcoin block ref after the reset: %v, want not found", err)
	}
	if c, err := s.GetCursor(ctx, "litecoin"); err != nil || c.Height != 100 {
		t.Errorf("litecoin cursor: %+v %v, want kept at 100", c, err)
	}
	if b, err := s.BlockAt(ctx, "litecoin", 100); err != nil || b.Hash != "c100" {
		t.Errorf("litecoin block ref: %+v %v, want kept", b, err)
	}
	err = s.InTx(ctx, func(tx *store.Tx) error {
		tr, err := tx.GetTransfer(ctx, "tr_reset")
		if err != nil || tr.BlockHeight == nil || *tr.BlockHeight != h {
			t.Errorf("transfer after the reset: %+v %v, want kept", tr, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
