package devnet_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

func startBtcd(t *testing.T, dir string) *devnet.Btcd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := devnet.StartBtcd(ctx, dir, 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	return b
}

func p2wpkh(t *testing.T, seed byte) []byte {
	t.Helper()
	h := make([]byte, 20)
	h[0] = seed
	a, err := btcutil.NewAddressWitnessPubKeyHash(h, &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	s, err := txscript.PayToAddrScript(a)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBtcdPayMineReorgRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	b := startBtcd(t, dir)
	if err := devnet.InstallBtcd(ctx); err != nil {
		t.Fatalf("InstallBtcd with btcd present: %v", err)
	}
	tip, err := b.Tip(ctx)
	if err != nil || tip < 101 {
		t.Fatalf("tip %d, %v: StartBtcd must fund the faucet", tip, err)
	}
	var txids []string
	for i := 0; i < 30; i++ { // more payments than one coinbase: change is reused
		id, err := b.Pay(ctx, p2wpkh(t, byte(i)), 10_000_000)
		if err != nil {
			t.Fatalf("payment %d: %v", i, err)
		}
		txids = append(txids, id)
	}
	many, err := b.PayMany(ctx, []devnet.Output{{Script: p2wpkh(t, 200), Amount: 5000}, {Script: p2wpkh(t, 201), Amount: 7000}})
	if err != nil {
		t.Fatal(err)
	}
	txids = append(txids, many)
	var pool []string
	if err := b.Call(ctx, "getrawmempool", &pool); err != nil {
		t.Fatal(err)
	}
	for _, id := range txids {
		if !slices.Contains(pool, id) {
			t.Fatalf("tx %s not in the mempool", id)
		}
	}
	hashes, err := b.Generate(ctx, 1)
	if err != nil || len(hashes) != 1 {
		t.Fatalf("Generate: %v, %v", hashes, err)
	}
	if err := b.Call(ctx, "getrawmempool", &pool); err != nil || len(pool) != 0 {
		t.Fatalf("mempool after mining: %v, %v", pool, err)
	}
	if err := b.InvalidateBlock(ctx, hashes[0]); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Tip(ctx); n != tip {
		t.Fatalf("tip after invalidate %d, want %d", n, tip)
	}
	if err := b.ReconsiderBlock(ctx, hashes[0]); err != nil {
		t.Fatal(err)
	}
	if h, _ := b.BlockHash(ctx, tip+1); h != hashes[0] {
		t.Fatalf("block %d after reconsider is %s, want %s", tip+1, h, hashes[0])
	}

	// A restart on the same dir works. btcd itself wipes a regtest chain on
	// every start (btcd.go removeRegressionDB), so the node is fresh again and
	// StartBtcd funds the faucet anew.
	b.Stop()
	b2 := startBtcd(t, dir)
	if n, err := b2.Tip(ctx); err != nil || n < 101 {
		t.Fatalf("tip after restart %d, %v", n, err)
	}
	if _, err := b2.Generate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Pay(ctx, p2wpkh(t, 99), 1_000_000); err != nil {
		t.Fatalf("Pay after restart: %v", err)
	}
}
