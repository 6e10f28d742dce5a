package ethdev_test

import (
	"context"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
)

func startAnvil(t *testing.T) *ethdev.Anvil {
	t.Helper()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}

func TestAnvilHelpers(t *testing.T) {
	a := startAnvil(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	token, err := a.DeployToken(ctx, "Tether USD", "USDT")
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000a11ce")
	if err := a.Mint(ctx, token, ethdev.AnvilDevAccount, big.NewInt(5_000_000)); err != nil {
		t.Fatal(err)
	}
	txh, err := a.TransferToken(ctx, token, to, big.NewInt(1_250_000))
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Eth.TransactionReceipt(ctx, txh)
	if err != nil || r.Status != types.ReceiptStatusSuccessful || len(r.Logs) != 1 {
		t.Fatalf("transfer receipt %+v, %v", r, err)
	}
	if got := new(big.Int).SetBytes(r.Logs[0].Data); got.Int64() != 1_250_000 {
		t.Fatalf("Transfer value %s, want 1250000", got)
	}
	if got := common.BytesToAddress(r.Logs[0].Topics[2].Bytes()); got != to {
		t.Fatalf("Transfer to %s, want %s", got, to)
	}

	before, err := a.Eth.BalanceAt(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendETH(ctx, to, big.NewInt(777)); err != nil {
		t.Fatal(err)
	}
	after, err := a.Eth.BalanceAt(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if new(big.Int).Sub(after, before).Int64() != 777 {
		t.Fatalf("balance went from %s to %s, want +777", before, after)
	}

	// A reverting call is mined with status 0 when gas is given.
	data, _ := contracts.TestToken.Call("transferThenRevert", to, big.NewInt(1))
	gas, err := a.Eth.EstimateGas(ctx, callMsg(token, mustCall(t, "transfer", to, big.NewInt(1))))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := a.Send(ctx, ethdev.TxRequest{To: &token, Data: data, Gas: 2 * gas})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != types.ReceiptStatusFailed || len(rr.Logs) != 0 {
		t.Fatalf("reverted tx: status %d, %d logs", rr.Status, len(rr.Logs))
	}

	tip, err := a.Eth.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Mine(ctx, 5); err != nil {
		t.Fatal(err)
	}
	tip2, _ := a.Eth.BlockNumber(ctx)
	if tip2 != tip+5 {
		t.Fatalf("tip %d after mining 5 on %d", tip2, tip)
	}
	old, err := a.Eth.HeaderByNumber(ctx, new(big.Int).SetUint64(tip2))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Reorg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	nw, err := a.Eth.HeaderByNumber(ctx, new(big.Int).SetUint64(tip2))
	if err != nil {
		t.Fatal(err)
	}
	if nw.Hash() == old.Hash() {
		t.Fatalf("block %d kept hash %s across anvil_reorg", tip2, old.Hash())
	}
}

func TestAnvilStatePersists(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	a, err := ethdev.StartAnvil(ctx, bin, dir, 0, "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	token, err := a.DeployToken(ctx, "USD Coin", "USDC")
	if err != nil {
		a.Kill()
		t.Fatal(err)
	}
	a.Stop()
	b, err := ethdev.StartAnvil(ctx, bin, dir, 0, "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	code, err := b.Eth.CodeAt(ctx, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) == 0 {
		t.Fatalf("token %s has no code after restart with --state", token)
	}
}

func TestInstallAnvilFindsExisting(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	// Installing into the prefix that already holds the binary is a no-op
	// returning the same path (no network use).
	prefix := filepath.Join(filepath.Dir(bin), "..", "..", "..", "..")
	got, err := ethdev.InstallAnvil(context.Background(), prefix)
	if err != nil {
		t.Skipf("anvil at %s is not an npm install: %v", bin, err)
	}
	want, _ := filepath.Abs(bin)
	if got != want {
		t.Fatalf("InstallAnvil returned %s, want the existing %s", got, want)
	}
}
