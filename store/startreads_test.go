package store_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// The readers a daemon's start uses to read in one statement what it read
// in one per network or per table answer what those did: CountAddressesAll
// is CountAddresses of each network (none: absent), FreeDerivedEach is
// FreeDerived of each pair in the order asked, ShopsAndKeys is Shops and
// ShopKeys (issue 37 item 3).
func TestStartReadersAnswerWhatTheOnesTheyFoldDid(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	var rows []store.Address
	for i := range 5 {
		rows = append(rows, store.Address{Network: "bitcoin", Key: bytes.Repeat([]byte{byte(i)}, 20), Address: fmt.Sprintf("b%d", i),
			Source: "fp-a", Index: int64(i), CreatedAt: now})
	}
	for i := range 2 {
		rows = append(rows, store.Address{Network: "bitcoin", Key: bytes.Repeat([]byte{byte(10 + i)}, 20), Address: fmt.Sprintf("c%d", i),
			Source: "fp-b", Index: int64(i), CreatedAt: now})
		rows = append(rows, store.Address{Network: "tron", Key: bytes.Repeat([]byte{byte(20 + i)}, 21), Address: fmt.Sprintf("t%d", i),
			Source: "fp-t", Index: int64(i), CreatedAt: now})
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error { _, err := tx.AddAddresses(ctx, rows); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `DELETE FROM free_addresses WHERE network = 'bitcoin' AND lane = 'fp-a' AND ord < 2`); err != nil {
		t.Fatal(err)
	}

	all, err := s.CountAddressesAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"bitcoin", "tron", "litecoin"} {
		one, err := s.CountAddresses(ctx, n)
		if err != nil || all[n] != one {
			t.Fatalf("%s: CountAddressesAll %d, CountAddresses %d %v", n, all[n], one, err)
		}
	}
	if all["bitcoin"] != 7 || all["tron"] != 2 {
		t.Fatalf("CountAddressesAll: %v", all)
	}

	nets := []string{"tron", "bitcoin", "bitcoin", "litecoin", "bitcoin"}
	srcs := []string{"fp-t", "fp-a", "fp-b", "fp-a", "fp-t"}
	each, err := s.FreeDerivedEach(ctx, nets, srcs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nets {
		one, err := s.FreeDerived(ctx, nets[i], srcs[i])
		if err != nil || each[i] != one {
			t.Fatalf("%s/%s: FreeDerivedEach %d, FreeDerived %d %v", nets[i], srcs[i], each[i], one, err)
		}
	}
	if want := []int64{2, 3, 2, 0, 0}; !reflect.DeepEqual(each, want) {
		t.Fatalf("FreeDerivedEach = %v, want %v", each, want)
	}
	if each, err := s.FreeDerivedEach(ctx, nil, nil); err != nil || len(each) != 0 {
		t.Fatalf("FreeDerivedEach of nothing: %v %v", each, err)
	}

	for _, id := range []string{"shop-b", "shop-a"} {
		if _, _, err := s.EnsureShop(ctx, store.Shop{ID: id, Name: id}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddShopKey(ctx, store.ShopKey{Store: "shop-a", Network: "bitcoin", AccountKey: "xpub-a", Fingerprint: "fa"}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddShopKey(ctx, store.ShopKey{Store: "shop-b", Network: "tron", AccountKey: "xpub-b", Fingerprint: "fb"}, now); err != nil {
		t.Fatal(err)
	}
	shops, keys, err := s.ShopsAndKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantShops, err := s.Shops(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantKeys, err := s.ShopKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shops, wantShops) || !reflect.DeepEqual(keys, wantKeys) || len(shops) != 3 || len(keys) != 2 {
		t.Fatalf("ShopsAndKeys:\n%+v\n%+v\nShops and ShopKeys:\n%+v\n%+v", shops, keys, wantShops, wantKeys)
	}
}
