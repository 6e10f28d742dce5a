package bitcoin_test

import (
	"encoding/json"
	"math/big"
	"slices"

	"github.com/paywatch/paywatch/payment"
)

// ltcAmount is a JSON number of litoshis in LTC, exact.
func ltcAmount(litoshis *big.Int) json.Number {
	return json.Number(payment.FormatUnits(litoshis, 8))
}

type rawTx struct {
	Vin []struct {
		Txid string `json:"txid"`
		Vout int    `json:"vout"`
	} `json:"vin"`
	Vout []struct {
		Value json.Number `json:"value"`
	} `json:"vout"`
}

// mempoolReplaced: a payment seen in the mempool is double-spent by a
// transaction paying the same coins back to the wallet, mined in the next
// block, so the payment vanishes unmined: its transfer is orphaned and the
// intent is awaiting payment again.
func mempoolReplaced(s *scan, node *litecoindNode) {
	ctx := nodeCtx(s.t)
	v := s.order("85.00")
	var txid string
	// sendtoaddress address amount comment comment_to subtractfeefromamount replaceable
	if err := node.node.Call(ctx, "sendtoaddress", &txid, v.Address, ltcAmount(big.NewInt(units(s.t, v))), "", "", false, true); err != nil {
		s.t.Fatal(err)
	}
	s.sync()
	if got := s.want(v, "detected", 1); got.Transfers[0].Status != "pending" || got.Transfers[0].TxID != txid {
		s.t.Fatalf("from the mempool: %+v", got.Transfers)
	}

	parse := func(n json.Number) *big.Int {
		u, err := payment.ParseUnits(string(n), 8)
		if err != nil {
			s.t.Fatalf("amount %q: %v", n, err)
		}
		return u
	}
	var tx rawTx
	if err := node.node.Call(ctx, "getrawtransaction", &tx, txid, true); err != nil {
		s.t.Fatal(err)
	}
	in, out := new(big.Int), new(big.Int)
	var inputs []map[string]any
	for _, vin := range tx.Vin {
		var prev rawTx
		if err := node.node.Call(ctx, "getrawtransaction", &prev, vin.Txid, true); err != nil {
			s.t.Fatal(err)
		}
		in.Add(in, parse(prev.Vout[vin.Vout].Value))
		inputs = append(inputs, map[string]any{"txid": vin.Txid, "vout": vin.Vout})
	}
	for _, o := range tx.Vout {
		out.Add(out, parse(o.Value))
	}
	fee := new(big.Int).Sub(in, out)
	fee.Mul(fee, big.NewInt(3)).Add(fee, big.NewInt(10_000))
	back, err := node.node.NewAddress(ctx, "")
	if err != nil {
		s.t.Fatal(err)
	}
	var unsigned string
	if err := node.node.Call(ctx, "createrawtransaction", &unsigned, inputs, map[string]json.Number{back: ltcAmount(new(big.Int).Sub(in, fee))}); err != nil {
		s.t.Fatal(err)
	}
	var signed struct {
		Hex      string `json:"hex"`
		Complete bool   `json:"complete"`
	}
	if err := node.node.Call(ctx, "signrawtransactionwithwallet", &signed, unsigned); err != nil || !signed.Complete {
		s.t.Fatalf("sign the replacement: %v %+v", err, signed)
	}
	// Litecoin Core relays no replacement (-mempoolreplacement is off), so a
	// miner takes the double spend directly into a block (generateblock);
	// the payment is evicted from the mempool as a conflict.
	var mined struct {
		Hash string `json:"hash"`
	}
	if err := node.node.Call(ctx, "generateblock", &mined, back, []string{signed.Hex}); err != nil {
		s.t.Fatalf("mine the double spend of %s: %v", txid, err)
	}
	if pool := s.node.Mempool(s.t); slices.Contains(pool, txid) {
		s.t.Fatalf("mempool %v still holds %s", pool, txid)
	}
	s.sync()
	got := s.want(v, "awaiting_payment", 1)
	if tr := got.Transfers[0]; tr.Status != "orphaned" || got.ReceivedBaseUnits != "0" {
		s.t.Fatalf("after the replacement: %+v", got)
	}
	if ev := s.events(v.ID); !slices.Equal(ev, []string{"intent.created", "intent.detected", "intent.awaiting_payment"}) {
		s.t.Fatalf("events %v", ev)
	}
	// Confirmed, the double spend changes nothing more.
	s.mine(s.conf)
	s.want(v, "awaiting_payment", 1)
}
