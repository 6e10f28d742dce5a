package evm_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// TestScanAnvilTraceBlindSpots pays ETH intents in the two ways the
// callTracer reports but a CALL-only, 8-level walk missed: by SELFDESTRUCT
// (in the creating transaction, and after Cancun from a contract that
// survives), and through a CALL chain 12 levels deep. Each payment goes
// through the real scanner into the store and must be recorded exactly once,
// with the amount that moved and a stable natural key (txid, index), also
// across an operator rescan.
func TestScanAnvilTraceBlindSpots(t *testing.T) {
	n := startScanNode(t)
	s := newScan(t, n, evm.TraceOn, nil)
	ctx := context.Background()
	relay, err := n.Deploy(ctx, contracts.Relay)
	if err != nil {
		t.Fatal(err)
	}
	first := int64(-1)
	// check syncs and asserts intent v holds exactly one transfer: of wei,
	// from tx r, at index.
	check := func(t *testing.T, v views.Intent, r *types.Receipt, index int64, wei *big.Int) {
		t.Helper()
		if r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("transaction %s reverted", r.TxHash)
		}
		if first < 0 {
			first = r.BlockNumber.Int64()
		}
		s.sync()
		got := s.Intent(v.ID)
		tr := only(t, got)
		if tr.TxID != r.TxHash.Hex() || tr.Index != index || tr.Asset != "ETH" || tr.AmountBaseUnits != wei.String() ||
			*tr.BlockHeight != r.BlockNumber.Int64() {
			t.Fatalf("intent %s: transfer %+v, want tx %s index %d amount %s at %d", got.Status, tr, r.TxHash.Hex(), index, wei, r.BlockNumber)
		}
	}

	t.Run("SelfdestructInCreatingTransaction", func(t *testing.T) {
		// A top-level creation whose constructor selfdestructs: the trace is
		// CREATE (value) -> SELFDESTRUCT (to the intent, value).
		v := s.intent(payment.ETH, "25.00")
		data, err := contracts.Selfdestructor.DeployData(addrOf(v), true)
		if err != nil {
			t.Fatal(err)
		}
		r, err := n.Send(ctx, ethdev.TxRequest{Value: amountOf(t, v), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		check(t, v, r, -2, amountOf(t, v))
		if code, err := n.Eth.CodeAt(ctx, r.ContractAddress, nil); err != nil || len(code) != 0 {
			t.Fatalf("created and destroyed in one transaction, the contract has %d bytes of code (%v)", len(code), err)
		}
	})

	t.Run("SelfdestructOfContractCreatedInsideCall", func(t *testing.T) {
		// Relay.createAndDestroy: CALL relay (top level) -> CREATE (index
		// -2) -> SELFDESTRUCT to the intent (index -3).
		v := s.intent(payment.ETH, "25.00")
		r := n.call(t, relay, contracts.Relay, amountOf(t, v), "createAndDestroy", addrOf(v))
		check(t, v, r, -3, amountOf(t, v))
	})

	t.Run("SelfdestructAfterCancunOnlyMovesBalance", func(t *testing.T) {
		// A contract created earlier keeps its code after SELFDESTRUCT
		// (EIP-6780) but its balance goes to the beneficiary: the balance
		// it held plus the call's value.
		v := s.intent(payment.ETH, "50.00")
		total := amountOf(t, v)
		held := new(big.Int).Div(total, big.NewInt(3))
		sd, err := n.Deploy(ctx, contracts.Selfdestructor, addrOf(v), false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.SendETH(ctx, sd, held); err != nil {
			t.Fatal(err)
		}
		r := n.call(t, sd, contracts.Selfdestructor, new(big.Int).Sub(total, held), "destroy", addrOf(v))
		check(t, v, r, -2, total)
		code, err := n.Eth.CodeAt(ctx, sd, nil)
		if err != nil || len(code) == 0 {
			t.Fatalf("after Cancun a SELFDESTRUCT outside the creating transaction keeps the code: %d bytes (%v)", len(code), err)
		}
		if bal, err := n.Eth.BalanceAt(ctx, sd, nil); err != nil || bal.Sign() != 0 {
			t.Fatalf("selfdestructed contract still holds %s (%v)", bal, err)
		}
		// It survived, so it can be paid and destroyed again: a second,
		// separate transfer to another intent.
		w := s.intent(payment.ETH, "25.00")
		r = n.call(t, sd, contracts.Selfdestructor, amountOf(t, w), "destroy", addrOf(w))
		check(t, w, r, -2, amountOf(t, w))
	})

	t.Run("CallChainDeeperThanEight", func(t *testing.T) {
		// relay(to, 12): twelve nested relay CALLs (indexes -2 … -13), the
		// thirteenth level pays the intent (index -14).
		v := s.intent(payment.ETH, "25.00")
		r := n.call(t, relay, contracts.Relay, amountOf(t, v), "relay", addrOf(v), big.NewInt(12))
		check(t, v, r, -14, amountOf(t, v))
	})

	t.Run("ShallowCallChainKeepsItsKey", func(t *testing.T) {
		// Within the old 8-level walk nothing changes: relay(to, 6) pays at
		// level 7, index -8, as before.
		v := s.intent(payment.ETH, "25.00")
		r := n.call(t, relay, contracts.Relay, amountOf(t, v), "relay", addrOf(v), big.NewInt(6))
		check(t, v, r, -8, amountOf(t, v))
	})

	t.Run("RescanRecordsNothingTwice", func(t *testing.T) {
		if first < 0 {
			t.Fatal("no payment was made")
		}
		s.mine(2)
		s.sync()
		before := s.Counts()
		status, body := s.Do("POST", "/v1/networks/ethereum/rescan", "operator", map[string]any{"from_height": first})
		if status != 200 && status != 202 {
			t.Fatalf("rescan: %d %s", status, body)
		}
		s.sync()
		if after := s.Counts(); after["transfers"] != before["transfers"] || after["events"] != before["events"] {
			t.Fatalf("rescan changed counts: %v -> %v", before, after)
		}
	})
}

// TestTraceDeepAndSelfdestructBlock checks the source alone: the deep and
// the selfdestruct payments of one transaction each are reported once, and
// a watched intermediate contract of the chain (the relay) is not paid
// twice by its own nested calls.
func TestTraceDeepAndSelfdestructBlock(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	src := n.client(t, evm.TraceOn, nil)
	relay, err := n.Deploy(ctx, contracts.Relay)
	if err != nil {
		t.Fatal(err)
	}
	payee := newAddress(t)
	r := n.call(t, relay, contracts.Relay, big.NewInt(9e15), "relay", payee, big.NewInt(20))
	b := blockOf(t, src, r, watch(payee))
	if len(b.Transfers) != 1 || b.Transfers[0].Index != -22 || b.Transfers[0].Amount.Int64() != 9e15 ||
		b.Transfers[0].Address != payee.Hex() || b.Transfers[0].TxID != r.TxHash.Hex() {
		t.Fatalf("relay(20) transfers %+v, want one of 9e15 at index -22", b.Transfers)
	}
	// The relay pays itself 20 times on the way down: 21 transfers to it
	// counting the top-level one, each with its own index.
	b = blockOf(t, src, r, watch(relay))
	if len(b.Transfers) != 21 {
		t.Fatalf("relay watched: %d transfers, want 21", len(b.Transfers))
	}
	seen := map[int64]bool{}
	for _, tr := range b.Transfers {
		if seen[tr.Index] || tr.Amount.Int64() != 9e15 || tr.Address != relay.Hex() {
			t.Fatalf("relay transfer %+v (indexes so far %v)", tr, seen)
		}
		seen[tr.Index] = true
	}
	if !seen[chains.NativeIndex] {
		t.Fatalf("no top-level transfer among %v", seen)
	}

	payee = newAddress(t)
	r = n.call(t, relay, contracts.Relay, big.NewInt(4e15), "createAndDestroy", payee)
	b = blockOf(t, src, r, watch(payee))
	if len(b.Transfers) != 1 || b.Transfers[0].Index != -3 || b.Transfers[0].Amount.Int64() != 4e15 {
		t.Fatalf("createAndDestroy transfers %+v, want one of 4e15 at index -3", b.Transfers)
	}
	if bal, err := n.Eth.BalanceAt(ctx, payee, nil); err != nil || bal.Int64() != 4e15 {
		t.Fatalf("payee balance %s (%v)", bal, err)
	}
}
