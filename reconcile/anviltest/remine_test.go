package anviltest_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/paywatchtest/reconciletest"
)

// Issue 32 item 1, on a real anvil: a USDT order paid in time; a one-block
// reorg re-mines the same transaction in another block behind another
// token's log (its block log index moves from 0 to 1) after the deadline.
// It is one transfer, with its first-seen time and record order; the order
// stays paid in time; nothing is in finance's inbox; the reconciliation
// counts the money once. (With the block log index as key it was a second
// transfer: the order expired, a late transfer and the on-time payment in
// the inbox.)
func TestTokenPaymentMinedAgainAtAnotherLogPositionIsOneTransfer(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx := reconciletest.Ctx(t)
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	usdt, err := a.DeployToken(ctx, "Tether USD", "USDT")
	if err != nil {
		t.Fatal(err)
	}
	other, err := a.DeployToken(ctx, "Other", "OTH")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Mint(ctx, usdt, ethdev.AnvilDevAccount, big.NewInt(1e12)); err != nil {
		t.Fatal(err)
	}
	if err := a.Mint(ctx, other, ethdev.AnvilSecondAccount, big.NewInt(1e12)); err != nil {
		t.Fatal(err)
	}
	src, err := evm.New(ctx, evm.Config{URL: a.RPCURL, Trace: evm.TraceOff,
		Tokens: []evm.Token{{Asset: payment.USDT, Contract: usdt}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	two := 2
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithSource(payment.Ethereum, src),
		paywatchtest.WithConfig(func(c *config.Config) {
			c.Networks[payment.Ethereum].Trace = evm.TraceOff
			c.Networks[payment.Ethereum].SafetyDepth = 6
			c.Methods[payment.USDTERC20].Contract = usdt.Hex()
			c.Methods[payment.USDTERC20].Confirmations = &two
		}))
	eth := payment.Ethereum
	e.Sync(eth) // the scanner starts at the tip
	x := e.CreateIntent("order", "ORD-REMINE", "cust-remine", "25.00", string(payment.USDTERC20))
	pay, err := contracts.TestToken.Call("transfer", common.HexToAddress(x.Address), paywatchtest.Units(x.AmountBaseUnits))
	if err != nil {
		t.Fatal(err)
	}
	raw, hash, err := a.Sign(ctx, ethdev.TxRequest{To: &usdt, Data: pay})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.MineTogether(ctx, nil, raw); err != nil {
		t.Fatal(err)
	}
	if err := a.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.Sync(eth)
	v := e.Intent(x.ID)
	if v.Status != "paid" || len(v.Transfers) != 1 || v.Transfers[0].TxID != hash.Hex() {
		t.Fatalf("after the payment: %s %+v", v.Status, v.Transfers)
	}
	first, err := e.Store.GetTransfer(context.Background(), v.Transfers[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := a.WaitReceipt(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}

	// Past the deadline, the payment's two blocks are replaced: the same
	// transaction behind another token's Transfer, then a block on top.
	e.Clock.Advance(3 * time.Hour)
	if err := a.Reorg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	ahead, err := contracts.TestToken.Call("transfer", common.HexToAddress(x.Address), big.NewInt(7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.MineTogether(ctx, []ethdev.TxRequest{{From: ethdev.AnvilSecondAccount, To: &other, Data: ahead}}, raw); err != nil {
		t.Fatal(err)
	}
	if err := a.Mine(ctx, 2); err != nil {
		t.Fatal(err)
	}
	r2, err := a.WaitReceipt(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if r2.BlockHash == r1.BlockHash || r2.Logs[0].Index == r1.Logs[0].Index {
		t.Fatalf("not mined again at another log position: %s log %d, then %s log %d", r1.BlockHash, r1.Logs[0].Index, r2.BlockHash, r2.Logs[0].Index)
	}
	e.Sync(eth)
	if _, err := e.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}

	v = e.Intent(x.ID)
	if v.Status != "paid" || v.Late || len(v.Transfers) != 1 {
		t.Fatalf("after the re-mine: %s late=%v, %d transfers %+v; want paid in time, one transfer", v.Status, v.Late, len(v.Transfers), v.Transfers)
	}
	again, err := e.Store.GetTransfer(context.Background(), v.Transfers[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || !again.FirstSeenAt.Equal(first.FirstSeenAt) || again.Recorded != first.Recorded ||
		again.Classification != payment.Settles || again.Status != payment.TransferConfirmed || *again.BlockHeight != int64(r2.BlockNumber.Uint64()) {
		t.Fatalf("the transfer after the re-mine: %s first seen %s recorded %d %s %s at %v; want %s first seen %s recorded %d settles confirmed at %d",
			again.ID, again.FirstSeenAt, again.Recorded, again.Classification, again.Status, *again.BlockHeight,
			first.ID, first.FirstSeenAt, first.Recorded, r2.BlockNumber)
	}
	var transfers int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM transfers WHERE txid = $1`, hash.Hex()).Scan(&transfers); err != nil {
		t.Fatal(err)
	}
	if transfers != 1 {
		t.Fatalf("%d transfers of %s stored, want 1", transfers, hash.Hex())
	}
	status, body := e.Do("GET", "/v1/transfers?status=unresolved", "finance", nil)
	var inbox finance.InboxPage
	if status != 200 || json.Unmarshal(body, &inbox) != nil {
		t.Fatalf("inbox: %d %s", status, body)
	}
	if len(inbox.Transfers) != 0 {
		t.Fatalf("finance's inbox after the re-mine: %+v", inbox.Transfers)
	}
	rep, err := e.Reports.Reconcile(context.Background(), "", time.Unix(0, 0), e.Clock.Now().Add(time.Hour), e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	counted := false
	for _, m := range rep.Totals {
		if m.Method != string(payment.USDTERC20) {
			continue
		}
		counted = true
		if m.Settled != x.AmountBaseUnits || m.Unresolved != "0" || m.Resolved != "0" {
			t.Fatalf("reconciliation: settled %s unresolved %s resolved %s; want %s once, 0, 0", m.Settled, m.Unresolved, m.Resolved, x.AmountBaseUnits)
		}
	}
	if !counted {
		t.Fatalf("reconciliation has no USDT-ERC20 totals: %+v", rep.Totals)
	}
}
