package devnet_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
)

func startLitecoind(t *testing.T, dir string, mweb bool) *devnet.Litecoind {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := devnet.StartLitecoind(ctx, dir, 0, mweb)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "litecoind", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Stop)
	return l
}

func TestLitecoindSendMineReorgRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	l := startLitecoind(t, dir, false)
	if err := devnet.InstallLitecoind(ctx); err != nil {
		t.Fatalf("InstallLitecoind with litecoind present: %v", err)
	}
	tip, err := l.Tip(ctx)
	if err != nil || tip < 101 {
		t.Fatalf("tip %d, %v: StartLitecoind must fund the wallet", tip, err)
	}
	a1, _ := l.NewAddress(ctx, "")
	a2, _ := l.NewAddress(ctx, "legacy")
	one, err := l.SendToAddress(ctx, a1, 12_345_678)
	if err != nil {
		t.Fatal(err)
	}
	many, err := l.SendMany(ctx, map[string]int64{a1: 1000_000, a2: 2000_000})
	if err != nil {
		t.Fatal(err)
	}
	var pool []string
	if err := l.Call(ctx, "getrawmempool", &pool); err != nil || !slices.Contains(pool, one) || !slices.Contains(pool, many) {
		t.Fatalf("mempool %v, %v; want %s and %s", pool, err, one, many)
	}
	var tx struct {
		Vout []struct {
			Value json.Number `json:"value"`
		} `json:"vout"`
	}
	if err := l.Call(ctx, "getrawtransaction", &tx, one, true); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tx.Vout, func(v struct {
		Value json.Number `json:"value"`
	}) bool {
		return v.Value == "0.12345678"
	}) {
		t.Fatalf("no 0.12345678 output in %+v", tx)
	}
	hashes, err := l.Generate(ctx, 2)
	if err != nil || len(hashes) != 2 {
		t.Fatalf("Generate: %v %v", hashes, err)
	}
	if err := l.InvalidateBlock(ctx, hashes[0]); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.Tip(ctx); n != tip {
		t.Fatalf("tip after invalidate %d, want %d", n, tip)
	}
	if err := l.Call(ctx, "getrawmempool", &pool); err != nil || !slices.Contains(pool, one) {
		t.Fatalf("invalidated tx not back in the mempool: %v %v", pool, err)
	}
	if err := l.ReconsiderBlock(ctx, hashes[0]); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.Tip(ctx); n != tip+2 {
		t.Fatalf("tip after reconsider %d, want %d", n, tip+2)
	}
	l.Stop()
	l2 := startLitecoind(t, dir, false)
	if n, err := l2.Tip(ctx); err != nil || n != tip+2 {
		t.Fatalf("tip after restart %d, %v; want %d (chain reused)", n, err, tip+2)
	}
	if _, err := l2.SendToAddress(ctx, a2, 1000_000); err != nil {
		t.Fatalf("wallet after restart: %v", err)
	}
	if l2.ActivateMWEB(ctx) == nil {
		t.Fatal("ActivateMWEB succeeded on a node started without MWEB")
	}
}

func TestLitecoindActivateMWEB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := startLitecoind(t, t.TempDir(), true)
	if err := l.ActivateMWEB(ctx); err != nil {
		t.Fatalf("ActivateMWEB: %v\n%s", err, l.LogTail())
	}
	hashes, err := l.Generate(ctx, 2)
	if err != nil {
		t.Fatalf("mining after activation: %v", err)
	}
	for _, h := range hashes {
		var blk struct {
			Mweb json.RawMessage `json:"mweb"`
			Tx   []struct {
				Vout []struct {
					ScriptPubKey struct {
						Type string `json:"type"`
					} `json:"scriptPubKey"`
				} `json:"vout"`
			} `json:"tx"`
		}
		if err := l.Call(ctx, "getblock", &blk, h, 2); err != nil {
			t.Fatal(err)
		}
		last := blk.Tx[len(blk.Tx)-1]
		if len(blk.Mweb) == 0 || len(last.Vout) == 0 || last.Vout[0].ScriptPubKey.Type != "witness_mweb_hogaddr" {
			t.Fatalf("block %s has no HogEx/MWEB: mweb %s, last tx %+v", h, blk.Mweb, last)
		}
	}
}
