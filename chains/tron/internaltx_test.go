package tron_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
)

// Issue 32 item 3: java-tron writes internal_transactions only with
// vm.saveInternalTx = true, and its shipped config has it false. Against
// such a node TRX a contract sends to us is in nothing the node answers: the
// real Nile contract call 01b4cde4… (2.5 TRX to the payee) reads as no
// transfer at all. A client serving the TRX method (NeedInternalTx) refuses
// the node in VerifyChain with an error naming the setting, found by
// asking for a transaction known to have internal transactions (on Nile
// that very call, NileInternalTxProbe; elsewhere Config.InternalTxProbe).
func TestNodeWithoutSavedInternalTxIsRefusedForTRX(t *testing.T) {
	load := func(t *testing.T, save bool, cfg tron.Config) *env {
		t.Helper()
		e := newEnv(t, cfg)
		if err := e.node.SetGenesisID(tron.NileGenesis); err != nil {
			t.Fatal(err)
		}
		e.node.SetSaveInternalTx(save)
		if err := e.node.AddCaptured(readFile(t, "reconstructed_block_66985120.json"),
			readFile(t, "reconstructed_infos_66985120.json")); err != nil {
			t.Fatal(err)
		}
		return e
	}
	payee := mustKey(t, internalPayee)
	t.Run("as shipped", func(t *testing.T) {
		e := load(t, false, tron.Config{NeedInternalTx: true})
		// What the node answers has the payment nowhere.
		b, err := e.client.Block(ctx(t), 66985120, watch(payee))
		if err != nil || len(b.Transfers) != 0 {
			t.Fatalf("block read from a node without internal transactions: %+v, %v", b.Transfers, err)
		}
		err = e.client.VerifyChain(ctx(t), "testnet")
		if !errors.Is(err, tron.ErrInternalTxNotSaved) || !strings.Contains(err.Error(), "vm.saveInternalTx = true") ||
			!strings.Contains(err.Error(), tron.NileInternalTxProbe) || !strings.Contains(err.Error(), "methods.TRX") {
			t.Fatalf("VerifyChain of a node without internal transactions: %v", err)
		}
		// Refused at every check, not once.
		if err := e.client.VerifyChain(ctx(t), "testnet"); !errors.Is(err, tron.ErrInternalTxNotSaved) {
			t.Fatalf("second VerifyChain: %v", err)
		}
	})
	t.Run("saveInternalTx on", func(t *testing.T) {
		e := load(t, true, tron.Config{NeedInternalTx: true})
		if err := e.client.VerifyChain(ctx(t), "testnet"); err != nil {
			t.Fatalf("VerifyChain of a node that saves internal transactions: %v", err)
		}
		b, err := e.client.Block(ctx(t), 66985120, watch(payee))
		if err != nil || len(b.Transfers) != 1 || b.Transfers[0].Amount.Cmp(big.NewInt(2_500_000)) != 0 {
			t.Fatalf("block: %+v, %v", b.Transfers, err)
		}
	})
	t.Run("TRX not served", func(t *testing.T) {
		e := load(t, false, tron.Config{})
		if err := e.client.VerifyChain(ctx(t), "testnet"); err != nil {
			t.Fatalf("VerifyChain without the TRX method: %v", err)
		}
	})
	t.Run("probe on a private chain", func(t *testing.T) {
		for _, save := range []bool{false, true} {
			node := tronfake.New()
			node.SetSaveInternalTx(save)
			probe := node.PayInternalTRX(newAccount(), newAccount(), 1_000_000, false)
			node.Mine(1)
			e := newEnvOn(t, node, tron.Config{NeedInternalTx: true, InternalTxProbe: probe})
			err := e.client.VerifyChain(ctx(t), "regtest")
			if save && err != nil {
				t.Fatalf("saveInternalTx on: %v", err)
			}
			if !save && (!errors.Is(err, tron.ErrInternalTxNotSaved) || !strings.Contains(err.Error(), probe)) {
				t.Fatalf("saveInternalTx off: %v", err)
			}
		}
		// A probe the node does not know is refused too, naming the setting.
		node := tronfake.New()
		e := newEnvOn(t, node, tron.Config{NeedInternalTx: true, InternalTxProbe: strings.Repeat("ab", 32)})
		if err := e.client.VerifyChain(ctx(t), "regtest"); !errors.Is(err, tron.ErrInternalTxNotSaved) || !strings.Contains(err.Error(), "internal_tx_probe") {
			t.Fatalf("unknown probe: %v", err)
		}
	})
	t.Run("bad probe", func(t *testing.T) {
		if _, err := tron.New(tron.Config{URL: "http://127.0.0.1:1", USDTContract: mainnetUSDT, InternalTxProbe: "nope"}); err == nil ||
			!strings.Contains(err.Error(), "InternalTxProbe") {
			t.Fatalf("bad probe accepted: %v", err)
		}
	})
}
