package tron_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/payment"
)

const (
	internalTx     = "01b4cde4197b9d1a1ff09ef5d2b1d939d3ec2401b3f002ebd0802c0f30a6e4ca"
	internalPayee  = "TFHPkEeiagtppic33VteApZQYsC6GDXGWP" // 413a4915…, internal_transactions[1..3]
	internalCaller = "TQZ4iNhzKZvM3nQTrtK69oNwLYxWLHa248" // 419ff8fc…, the Nile contract
)

// TestGoldenInternalTRX reads the Nile contract call 01b4cde4… whose
// TransactionInfo (real shape, see testdata/*.source.txt) carries four
// internal transactions: 0 sun to the contract itself, 2.5 TRX to the
// payee, a rejected 0.7 TRX and 900 units of a TRC-10 token to the payee.
// Only the 2.5 TRX is reported, at Index -2 - 1.
func TestGoldenInternalTRX(t *testing.T) {
	e := newEnv(t, tron.Config{})
	if err := e.node.AddCaptured(readFile(t, "reconstructed_block_66985120.json"),
		readFile(t, "reconstructed_infos_66985120.json")); err != nil {
		t.Fatal(err)
	}
	payee, contract := mustKey(t, internalPayee), mustKey(t, internalCaller)
	b, err := e.client.Block(ctx(t), 66985120, watch(payee, contract))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers %+v", b.Transfers)
	}
	tr := b.Transfers[0]
	if tr.TxID != internalTx || tr.Index != -3 || tr.Asset != payment.Native ||
		tr.Amount.Cmp(big.NewInt(2_500_000)) != 0 || tr.Address != internalPayee || string(tr.Key) != string(payee) {
		t.Fatalf("transfer %+v amount %s", tr, tr.Amount)
	}
	// The contract's 0-sun call to itself is no payment to it.
	if b, err := e.client.Block(ctx(t), 66985120, watch(contract)); err != nil || len(b.Transfers) != 0 {
		t.Fatalf("contract watched: %+v, %v", b.Transfers, err)
	}
}

// TestGoldenInternalTRXMutations changes one thing at a time; each must
// change what is reported the way the rules say (or make the block fail
// as an invalid response).
func TestGoldenInternalTRXMutations(t *testing.T) {
	block := string(readFile(t, "reconstructed_block_66985120.json"))
	infos := string(readFile(t, "reconstructed_infos_66985120.json"))
	payee := mustKey(t, internalPayee)
	cases := []struct {
		name     string
		inBlock  bool
		old, new string
		want     []int64 // indexes reported
		invalid  bool
	}{
		{name: "unchanged", want: []int64{-3}},
		{name: "tx ret REVERT", inBlock: true, old: `"contractRet": "SUCCESS"`, new: `"contractRet": "REVERT"`},
		{name: "receipt REVERT", old: `"result": "SUCCESS"`, new: `"result": "REVERT"`},
		{name: "result FAILED", old: `"receipt": {`, new: `"result": "FAILED", "receipt": {`},
		{name: "rejected one kept", old: `"rejected": true`, new: `"rejected": false`, want: []int64{-3, -4}},
		{name: "TRC-10 becomes TRX", old: `"tokenId": "1000016",`, new: ``, want: []int64{-3, -5}},
		{name: "first rejected", old: `"callValue": 2500000
                    }
                ],
                "note": "63616c6c"`, new: `"callValue": 2500000
                    }
                ],
                "note": "63616c6c", "rejected": true`},
		{name: "zero callValue", old: `"callValue": 2500000`, new: `"callValue": 0`},
		{name: "max int64", old: `"callValue": 2500000`, new: `"callValue": 9223372036854775807`, want: []int64{-3}},
		{name: "callValue not a number", old: `"callValue": 2500000`, new: `"callValue": "2500000x"`, invalid: true},
		{name: "callValue float", old: `"callValue": 2500000`, new: `"callValue": 2500000.5`, invalid: true},
		{name: "callValue negative", old: `"callValue": 2500000`, new: `"callValue": -1`, invalid: true},
		{name: "callValue overflow", old: `"callValue": 2500000`, new: `"callValue": 9223372036854775808`, invalid: true},
		{name: "transferTo without 41", old: `"transferTo_address": "413a4915`, new: `"transferTo_address": "3a4915`, invalid: true},
		{name: "rejected not a bool", old: `"rejected": true`, new: `"rejected": "yes"`, invalid: true},
	}
	for _, c := range cases {
		b, inf := block, infos
		if c.old != "" {
			src := &inf
			if c.inBlock {
				src = &b
			}
			if !strings.Contains(*src, c.old) {
				t.Fatalf("%s: %q not in the testdata", c.name, c.old)
			}
			*src = strings.Replace(*src, c.old, c.new, 1)
		}
		e := newEnv(t, tron.Config{})
		if err := e.node.AddCaptured([]byte(b), []byte(inf)); err != nil {
			t.Fatal(err)
		}
		got, err := e.client.Block(ctx(t), 66985120, watch(payee))
		if c.invalid {
			if !errors.Is(err, chains.ErrInvalidResponse) || !strings.Contains(err.Error(), "66985120") {
				t.Errorf("%s: err %v, want ErrInvalidResponse naming the block", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var idx []int64
		for _, tr := range got.Transfers {
			if tr.TxID != internalTx || tr.Asset != payment.Native || tr.Amount.Sign() <= 0 {
				t.Errorf("%s: transfer %+v", c.name, tr)
			}
			idx = append(idx, tr.Index)
		}
		if len(idx) != len(c.want) {
			t.Errorf("%s: indexes %v, want %v", c.name, idx, c.want)
			continue
		}
		for i := range idx {
			if idx[i] != c.want[i] {
				t.Errorf("%s: indexes %v, want %v", c.name, idx, c.want)
			}
		}
	}
}

// TestInternalTRXFromFake: the fake's contract calls are read like the
// capture: a paid internal transfer is reported with its own index next to
// the transaction's other transfers; rejected, TRC-10 and reverted ones are
// not.
func TestInternalTRXFromFake(t *testing.T) {
	e := newEnv(t, tron.Config{})
	to, contract := newAccount(), newAccount()
	paid := e.node.PayInternalTRX(contract, to, 1_234_567, false)
	e.node.PayInternalTRX(contract, to, 5, true)
	e.node.CallContract(contract, newAccount(), true, tronfakeTRC10(to))
	e.node.CallContract(contract, newAccount(), false, tronfakeTRX(to, 77))
	two := e.node.CallContract(contract, newAccount(), true, tronfakeTRX(newAccount(), 1), tronfakeTRX(to, 8), tronfakeTRX(to, 9))
	e.node.Mine(1)
	b, err := e.client.Block(ctx(t), chains.Height(e.node.Tip()), watch(to))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		tx  string
		idx int64
		sun int64
	}
	want := []key{{paid, -2, 1_234_567}, {two, -3, 8}, {two, -4, 9}}
	if len(b.Transfers) != len(want) {
		t.Fatalf("transfers %+v", b.Transfers)
	}
	for i, tr := range b.Transfers {
		if (key{tr.TxID, tr.Index, tr.Amount.Int64()}) != want[i] || tr.Asset != payment.Native || string(tr.Key) != string(to) {
			t.Fatalf("transfer %d: %+v %s, want %+v", i, tr, tr.Amount, want[i])
		}
	}
}

func tronfakeTRX(to []byte, sun int64) tronfake.Internal {
	return tronfake.Internal{To: to, Amount: sun}
}

func tronfakeTRC10(to []byte) tronfake.Internal {
	return tronfake.Internal{To: to, Amount: 1000, TokenID: "1002000"}
}

// TestScanTronInternalTRXPaidAtSolidified: an intent paid by TRX a contract
// sends (an internal transaction) is detected in its block and paid once
// that block is solidified, through the scanner, the service and the API.
func TestScanTronInternalTRXPaidAtSolidified(t *testing.T) {
	s := newTronScan(t)
	v := s.CreateIntent("order", "TRON-INTERNAL-TRX", "", "10.00", "TRX")
	if v.AmountBaseUnits != "40000000" {
		t.Fatalf("intent amount %s", v.AmountBaseUnits)
	}
	contract := newAccount()
	s.node.PayInternalTRX(contract, s.key(v), units(v), true) // rejected: moves nothing
	txid := s.node.PayInternalTRX(contract, s.key(v), units(v), false)
	s.mine(1)
	h := s.node.Tip()
	s.sync()
	got := s.Intent(v.ID)
	if got.Status != "detected" || len(got.Transfers) != 1 {
		t.Fatalf("after its block: %s %+v", got.Status, got.Transfers)
	}
	tr := got.Transfers[0]
	if tr.TxID != txid || tr.Index != -2 || tr.AmountBaseUnits != v.AmountBaseUnits || tr.BlockHeight == nil ||
		uint64(*tr.BlockHeight) != h || tr.Status != "confirming" || tr.Address != v.Address {
		t.Fatalf("transfer %+v, want %s of %s in block %d", tr, txid, v.AmountBaseUnits, h)
	}
	s.solidify(h, v.ID)
	got = s.Intent(v.ID)
	if got.Status != "paid" || got.PaidUSD != "10.00" || len(got.Transfers) != 1 ||
		got.Transfers[0].Classification != "settles" || got.Transfers[0].Status != "confirmed" {
		t.Fatalf("after solidified: %+v", got)
	}
}
