package bitcoin_test

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// Issue 27, hole 2: a coinbase output paying one of our addresses is
// recorded and marked as coinbase, and pays only at coinbase maturity (100
// confirmations), not after the method's few confirmations.
func TestCoinbaseOutputPaysAtMaturity(t *testing.T) {
	t.Run("btcd", func(t *testing.T) {
		node := startBtcd(t)
		src := newClient(t, payment.Bitcoin, node.node.RPCURL, true)
		s := newScan(t, payment.Bitcoin, "BTC", 2, node, src)
		coinbaseMatures(s, func(address string) {
			mineCoinbaseTo(t, node, address, 1_000_000)
		})
	})
	t.Run("litecoind", func(t *testing.T) {
		node := startLitecoind(t, false)
		src := newClient(t, payment.Litecoin, node.node.RPCURL, false)
		s := newScan(t, payment.Litecoin, "LTC", 4, node, src)
		coinbaseMatures(s, func(address string) {
			var hashes []string
			if err := node.node.Call(nodeCtx(t), "generatetoaddress", &hashes, 1, address); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func coinbaseMatures(s *scan, mineTo func(address string)) {
	s.settle()
	v := s.order("20.00")
	mineTo(v.Address)
	s.sync()
	got := s.e.Intent(v.ID)
	if len(got.Transfers) != 1 {
		s.t.Fatalf("coinbase to the intent's address: %d transfers: %+v", len(got.Transfers), got)
	}
	tr := got.Transfers[0]
	if !tr.Coinbase || tr.Required != payment.CoinbaseMaturity || tr.Index != 0 || tr.Status != "confirming" {
		s.t.Fatalf("coinbase transfer: %+v", tr)
	}
	// The method's confirmations and many more: still confirming.
	s.mine(payment.CoinbaseMaturity - 2)
	tr = coinbaseTransfer(s, v)
	if tr.Status != "confirming" || tr.Confirmations != payment.CoinbaseMaturity-1 {
		s.t.Fatalf("after %d confirmations: %+v", payment.CoinbaseMaturity-1, tr)
	}
	if st := s.e.Intent(v.ID).Status; st == "paid" {
		s.t.Fatalf("intent paid by an immature coinbase")
	}
	s.mine(1)
	tr = coinbaseTransfer(s, v)
	if tr.Status != "confirmed" || tr.Confirmations != payment.CoinbaseMaturity {
		s.t.Fatalf("at maturity: %+v", tr)
	}
}

func coinbaseTransfer(s *scan, v views.Intent) views.Transfer {
	s.t.Helper()
	got := s.e.Intent(v.ID)
	if len(got.Transfers) != 1 {
		s.t.Fatalf("%d transfers", len(got.Transfers))
	}
	return got.Transfers[0]
}

// mineCoinbaseTo builds, solves and submits a regtest block on btcd's tip
// whose coinbase pays sats to address (btcd has no generatetoaddress).
func mineCoinbaseTo(t *testing.T, b *btcdNode, address string, sats int64) {
	t.Helper()
	ctx := nodeCtx(t)
	a, err := addresses.ParseAddress(payment.Bitcoin, "regtest", address)
	if err != nil {
		t.Fatal(err)
	}
	tip := b.Tip(t)
	var rawHex string
	if err := b.node.Call(ctx, "getblock", &rawHex, b.BlockHash(t, tip), 0); err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		t.Fatal(err)
	}
	var prev wire.MsgBlock
	if err := prev.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	sig, err := txscript.NewScriptBuilder().AddInt64(tip + 1).AddData([]byte("paywatch coinbase test")).Script()
	if err != nil {
		t.Fatal(err)
	}
	cb := wire.NewMsgTx(1)
	cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: sig, Sequence: wire.MaxTxInSequenceNum})
	cb.AddTxOut(wire.NewTxOut(sats, a.Key))
	blk := wire.MsgBlock{Header: wire.BlockHeader{
		Version: 0x20000000, PrevBlock: prev.BlockHash(), MerkleRoot: cb.TxHash(),
		Timestamp: prev.Header.Timestamp.Add(time.Second), Bits: prev.Header.Bits,
	}, Transactions: []*wire.MsgTx{cb}}
	target := blockchain.CompactToBig(blk.Header.Bits)
	for {
		h := blk.BlockHash()
		if blockchain.HashToBig(&h).Cmp(target) <= 0 {
			break
		}
		blk.Header.Nonce++
	}
	var buf bytes.Buffer
	if err := blk.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	var res any
	if err := b.node.Call(ctx, "submitblock", &res, hex.EncodeToString(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if res != nil {
		t.Fatalf("submitblock: %v", res)
	}
	if got := b.Tip(t); got != tip+1 {
		t.Fatalf("tip %d after submitblock, want %d", got, tip+1)
	}
}
