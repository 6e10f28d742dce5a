package bitcoin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	ltcwire "github.com/ltcsuite/ltcd/wire"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// Issue 32 item 4: a Litecoin MWEB peg-out to one of our addresses is an
// output of its block's HogEx transaction, spendable only after
// PEGOUT_MATURITY (6) blocks. It is recorded as the HogEx's output and pays
// only then, not after the method's 2 confirmations. The peg-out is a real
// one: a second wallet holding only MWEB coins pays the intent's address.
func TestMWEBPegOutPaysAtPegoutMaturity(t *testing.T) {
	node := startLitecoind(t, true)
	src := newClient(t, payment.Litecoin, node.node.RPCURL, false)
	s := newScan(t, payment.Litecoin, "LTC", 2, node, src)
	ctx := nodeCtx(t)
	if err := node.node.ActivateMWEB(ctx); err != nil {
		t.Fatalf("ActivateMWEB: %v", err)
	}
	s.sync()
	// With two wallets loaded every wallet call names its wallet.
	w := devnet.CoreRPC{RPCURL: node.node.RPCURL + "/wallet/w"}
	mw := devnet.CoreRPC{RPCURL: node.node.RPCURL + "/wallet/mw"}
	if err := node.node.Call(ctx, "createwallet", nil, "mw"); err != nil {
		t.Fatal(err)
	}
	var mineTo, mwebAddr string
	if err := w.Call(ctx, "getnewaddress", &mineTo, ""); err != nil {
		t.Fatal(err)
	}
	mine := func() {
		t.Helper()
		if err := node.node.Call(ctx, "generatetoaddress", nil, 1, mineTo); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Call(ctx, "getnewaddress", &mwebAddr, "", "mweb"); err != nil {
		t.Fatal(err)
	}
	// A peg-in straight to mw's MWEB address: mw holds MWEB coins only.
	if err := w.Call(ctx, "sendtoaddress", nil, mwebAddr, json.Number("1.00000000")); err != nil {
		t.Fatalf("peg-in: %v", err)
	}
	mine()
	v := s.order("20.00")
	amount := units(t, v)
	if err := mw.Call(ctx, "sendtoaddress", nil, v.Address, json.Number(fmt.Sprintf("%d.%08d", amount/1e8, amount%1e8))); err != nil {
		t.Fatalf("peg-out: %v", err)
	}
	mine()
	if err := node.node.Call(ctx, "unloadwallet", nil, "mw"); err != nil {
		t.Fatal(err)
	}
	s.sync()
	tr := pegoutTransfer(s, v)
	// It is an output of the HogEx of the tip block.
	raw, err := src.RawBlock(ctx, chains.Height(*tr.BlockHeight))
	if err != nil {
		t.Fatal(err)
	}
	var mb ltcwire.MsgBlock
	if err := mb.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	hogex := mb.Transactions[len(mb.Transactions)-1]
	if !hogex.IsHogEx || hogex.TxHash().String() != tr.TxID || tr.Index < 1 {
		t.Fatalf("transfer %s:%d is not a peg-out output of block %d's HogEx %s", tr.TxID, tr.Index, *tr.BlockHeight, hogex.TxHash())
	}
	if tr.Required != payment.PegoutMaturity || tr.Status != "confirming" || tr.AmountBaseUnits != v.AmountBaseUnits {
		t.Fatalf("peg-out transfer: %+v, want confirming with %d confirmations required", tr, payment.PegoutMaturity)
	}
	// The method's 2 confirmations and more: still confirming, unpaid.
	s.mine(payment.PegoutMaturity - 2)
	if tr = pegoutTransfer(s, v); tr.Status != "confirming" || tr.Confirmations != payment.PegoutMaturity-1 {
		t.Fatalf("after %d confirmations: %+v", payment.PegoutMaturity-1, tr)
	}
	if st := s.e.Intent(v.ID).Status; st == "paid" {
		t.Fatalf("intent paid by an immature peg-out")
	}
	s.mine(1)
	if tr = pegoutTransfer(s, v); tr.Status != "confirmed" || tr.Confirmations != payment.PegoutMaturity {
		t.Fatalf("at maturity: %+v", tr)
	}
	if st := s.e.Intent(v.ID).Status; st != "paid" {
		t.Fatalf("intent %s at the peg-out's maturity, want paid", st)
	}
}

func pegoutTransfer(s *scan, v views.Intent) views.Transfer {
	s.t.Helper()
	got := s.e.Intent(v.ID)
	if len(got.Transfers) != 1 {
		s.t.Fatalf("%d transfers to the intent: %+v", len(got.Transfers), got.Transfers)
	}
	return got.Transfers[0]
}
