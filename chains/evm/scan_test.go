package evm_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// The end-to-end tests below run the whole of paywatch over a real anvil:
// the evm client feeds the chain-neutral scanner, which writes through the
// intents service into a real PostgreSQL; every assertion reads the HTTP API
// (or the database where the API has no view).

// anvilAccount1 is anvil's second dev account, unlocked: the attacker of the
// poisoning test.
var anvilAccount1 = common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")

// startScanNode is startNode with extra anvil arguments.
func startScanNode(t *testing.T, args ...string) *node {
	t.Helper()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	n := &node{Anvil: a}
	for _, d := range []struct {
		dst          *common.Address
		name, symbol string
	}{{&n.usdt, "Tether USD", "USDT"}, {&n.usdc, "USD Coin", "USDC"}, {&n.fake, "Tether USD", "USDT"}} {
		if *d.dst, err = a.DeployToken(ctx, d.name, d.symbol); err != nil {
			t.Fatal(err)
		}
		if err := a.Mint(ctx, *d.dst, ethdev.AnvilDevAccount, big.NewInt(1e15)); err != nil {
			t.Fatal(err)
		}
	}
	if n.forwarder, err = a.Deploy(ctx, contracts.Forwarder); err != nil {
		t.Fatal(err)
	}
	if n.reverter, err = a.Deploy(ctx, contracts.Reverter); err != nil {
		t.Fatal(err)
	}
	n.tokens = []evm.Token{{Asset: payment.USDT, Contract: n.usdt}, {Asset: payment.USDC, Contract: n.usdc}}
	return n
}

// scanAccountKey is the xpub (m/44'/60'/0') of a seed private to these
// tests. The sandbox key derives anvil's own funded dev accounts (index 0 is
// 0xf39F…, the payer of every helper), which would make an intent's address
// the payer, and its 10,000 ETH an unexplained balance.
func scanAccountKey(t *testing.T) string {
	t.Helper()
	seed := sha256.Sum256([]byte("paywatch chains/evm end-to-end tests"))
	k, err := hdkeychain.NewMaster(seed[:], &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{44, 60, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	return pub.String()
}

// scan is a paywatch core scanning one anvil.
type scan struct {
	*paywatchtest.Env
	n    *node
	src  *evm.Client
	refs int
}

func newScan(t *testing.T, n *node, trace string, adjust func(*config.Config)) *scan {
	t.Helper()
	src := n.client(t, trace, nil)
	key := scanAccountKey(t)
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithSource(payment.Ethereum, src),
		paywatchtest.WithConfig(func(c *config.Config) {
			c.Methods[payment.USDTERC20].Contract = n.usdt.Hex()
			c.Methods[payment.USDCERC20].Contract = n.usdc.Hex()
			nc := c.Networks[payment.Ethereum]
			nc.AccountKey = key
			nc.Trace = trace
			if adjust != nil {
				adjust(c)
			}
		}))
	// As the daemon does (daemon/daemon.go): the status endpoint reports
	// the client's trace mode.
	e.Nets.Modes = func(net payment.Network) string {
		if net == payment.Ethereum {
			return src.TraceMode()
		}
		return ""
	}
	return &scan{Env: e, n: n, src: src}
}

func (s *scan) sync() { s.Sync(payment.Ethereum) }

func (s *scan) mine(k int) {
	s.T.Helper()
	if err := s.n.Mine(context.Background(), k); err != nil {
		s.T.Fatal(err)
	}
}

// intent creates an order intent for usd with method m.
func (s *scan) intent(m payment.Method, usd string) views.Intent {
	s.T.Helper()
	s.refs++
	v := s.CreateIntent("order", fmt.Sprintf("ORD-%d", s.refs), "", usd, string(m))
	if v.Status != "awaiting_payment" || !common.IsHexAddress(v.Address) {
		s.T.Fatalf("new intent %+v", v)
	}
	return v
}

func addrOf(v views.Intent) common.Address { return common.HexToAddress(v.Address) }

func amountOf(t testing.TB, v views.Intent) *big.Int {
	t.Helper()
	a, ok := new(big.Int).SetString(v.AmountBaseUnits, 10)
	if !ok || a.Sign() <= 0 {
		t.Fatalf("intent amount %q", v.AmountBaseUnits)
	}
	return a
}

func (s *scan) payETH(v views.Intent, wei *big.Int) *types.Receipt {
	s.T.Helper()
	h, err := s.n.SendETH(context.Background(), addrOf(v), wei)
	if err != nil {
		s.T.Fatal(err)
	}
	return receipt(s.T.(*testing.T), s.n, h)
}

func (s *scan) payToken(token common.Address, v views.Intent, units *big.Int) *types.Receipt {
	s.T.Helper()
	h, err := s.n.TransferToken(context.Background(), token, addrOf(v), units)
	if err != nil {
		s.T.Fatal(err)
	}
	return receipt(s.T.(*testing.T), s.n, h)
}

// inbox returns the finance inbox (unresolved) of Ethereum by transfer id.
func (s *scan) inbox() map[string]views.Transfer {
	s.T.Helper()
	status, body := s.Do("GET", "/v1/transfers?network=ethereum&limit=1000", "finance", nil)
	if status != 200 {
		s.T.Fatalf("GET /v1/transfers: %d %s", status, body)
	}
	var page finance.InboxPage
	if err := json.Unmarshal(body, &page); err != nil {
		s.T.Fatal(err)
	}
	out := map[string]views.Transfer{}
	for _, t := range page.Transfers {
		out[t.ID] = t
	}
	return out
}

// mode returns the status endpoint's mode for Ethereum.
func (s *scan) mode() string {
	s.T.Helper()
	status, body := s.Do("GET", "/v1/status", "operator", nil)
	if status != 200 {
		s.T.Fatalf("GET /v1/status: %d %s", status, body)
	}
	var st struct {
		Networks []availability.NetworkStatus `json:"networks"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		s.T.Fatal(err)
	}
	for _, n := range st.Networks {
		if n.Network == string(payment.Ethereum) {
			return n.Mode
		}
	}
	s.T.Fatalf("no ethereum in %s", body)
	return ""
}

// events counts the events of type typ about an intent.
func (s *scan) events(typ, intentID string) int {
	s.T.Helper()
	var n int
	err := s.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE type = $1 AND intent_id = $2`, typ, intentID).Scan(&n)
	if err != nil {
		s.T.Fatal(err)
	}
	return n
}

// only returns the intent's single transfer, failing otherwise.
func only(t *testing.T, v views.Intent) views.Transfer {
	t.Helper()
	if len(v.Transfers) != 1 {
		t.Fatalf("intent %s (%s): %d transfers %+v, want 1", v.ID, v.Status, len(v.Transfers), v.Transfers)
	}
	return v.Transfers[0]
}

// confirmETH mines until a transfer of ETH intent v paid at block h has one
// confirmation less than required, checks it is still detected, then mines
// the last block and checks it is paid.
func (s *scan) confirmETH(t *testing.T, v views.Intent, r *types.Receipt) views.Intent {
	t.Helper()
	tip, err := s.src.Tip(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	have := int(tip - chains.Height(r.BlockNumber.Uint64()) + 1)
	need := v.ConfirmationsRequired
	if need != 12 {
		t.Fatalf("ETH intent needs %d confirmations, want the default 12", need)
	}
	if have < need-1 {
		s.mine(need - 1 - have)
	}
	s.sync()
	if got := s.Intent(v.ID); got.Status != "detected" || only(t, got).Confirmations != int64(need-1) {
		t.Fatalf("at %d confirmations: %s %+v", need-1, got.Status, got.Transfers)
	}
	s.mine(1)
	s.sync()
	got := s.Intent(v.ID)
	if got.Status != "paid" || only(t, got).Confirmations != int64(need) || got.Transfers[0].Status != "confirmed" {
		t.Fatalf("at %d confirmations: %s %+v", need, got.Status, got.Transfers)
	}
	return got
}

func TestScanAnvil(t *testing.T) {
	n := startScanNode(t)
	s := newScan(t, n, evm.TraceAuto, nil)
	ctx := context.Background()
	if m := s.mode(); m != evm.ModeTrace {
		t.Fatalf("status mode %q, want %q (anvil traces)", m, evm.ModeTrace)
	}

	t.Run("ETHExact", func(t *testing.T) {
		v := s.intent(payment.ETH, "25.00")
		r := s.payETH(v, amountOf(t, v))
		s.sync()
		got := s.Intent(v.ID)
		tr := only(t, got)
		if got.Status != "detected" || tr.TxID != r.TxHash.Hex() || tr.Index != -1 || tr.Asset != "ETH" ||
			tr.AmountBaseUnits != v.AmountBaseUnits || tr.Confirmations != 1 || *tr.BlockHeight != r.BlockNumber.Int64() {
			t.Fatalf("after 1 block: %s %+v", got.Status, tr)
		}
		got = s.confirmETH(t, v, r)
		if got.Transfers[0].Classification != "settles" || got.PaidUSD != "25.00" || got.Overpaid || got.Late {
			t.Fatalf("paid intent %+v", got)
		}
		if s.events("intent.paid", v.ID) != 1 || s.events("intent.detected", v.ID) != 1 {
			t.Fatalf("events paid %d detected %d", s.events("intent.paid", v.ID), s.events("intent.detected", v.ID))
		}
		if _, listed := s.inbox()[got.Transfers[0].ID]; listed {
			t.Fatal("a settling transfer is in the finance inbox")
		}
	})

	t.Run("USDTExact", func(t *testing.T) {
		v := s.intent(payment.USDTERC20, "10.00")
		if v.AmountBaseUnits != "10000000" {
			t.Fatalf("USDT amount %s", v.AmountBaseUnits)
		}
		r := s.payToken(n.usdt, v, amountOf(t, v))
		s.sync()
		if got := s.Intent(v.ID); got.Status != "detected" || only(t, got).Asset != "USDT" || got.Transfers[0].Index != int64(r.Logs[0].Index) {
			t.Fatalf("after 1 block: %+v", got)
		}
		got := s.confirmETH(t, v, r)
		if got.Transfers[0].Classification != "settles" || got.PaidUSD != "10.00" {
			t.Fatalf("paid intent %+v", got)
		}
	})

	t.Run("USDCToUSDTIntentIsWrongAsset", func(t *testing.T) {
		v := s.intent(payment.USDTERC20, "10.00")
		s.payToken(n.usdc, v, amountOf(t, v))
		s.mine(12)
		s.sync()
		got := s.Intent(v.ID)
		tr := only(t, got)
		if got.Status != "awaiting_payment" || tr.Asset != "USDC" || tr.Classification != "wrong_asset" || tr.Status != "confirmed" {
			t.Fatalf("intent %s transfer %+v", got.Status, tr)
		}
		if in, ok := s.inbox()[tr.ID]; !ok || in.Classification != "wrong_asset" {
			t.Fatalf("finance inbox: %+v (listed %v)", in, ok)
		}
	})

	t.Run("LookAlikeTokenNotRecorded", func(t *testing.T) {
		v := s.intent(payment.USDTERC20, "10.00")
		before := s.Counts()
		r := s.payToken(n.fake, v, amountOf(t, v))
		if len(r.Logs) != 1 || common.BytesToAddress(r.Logs[0].Topics[2].Bytes()) != addrOf(v) {
			t.Fatalf("the look-alike did not emit a Transfer to the intent: %+v", r.Logs)
		}
		s.mine(12)
		s.sync()
		if got := s.Intent(v.ID); got.Status != "awaiting_payment" || len(got.Transfers) != 0 {
			t.Fatalf("look-alike counted: %+v", got)
		}
		if after := s.Counts(); after["transfers"] != before["transfers"] || after["events"] != before["events"] {
			t.Fatalf("look-alike recorded: %v -> %v", before, after)
		}
	})

	t.Run("RevertedTokenTransferNotRecorded", func(t *testing.T) {
		v := s.intent(payment.USDTERC20, "10.00")
		before := s.Counts()
		data, _ := contracts.TestToken.Call("transferThenRevert", addrOf(v), amountOf(t, v))
		gas := estimate(t, n, n.usdt, contracts.TestToken, "transfer", addrOf(v), amountOf(t, v))
		r, err := n.Send(ctx, ethdev.TxRequest{To: &n.usdt, Data: data, Gas: 3 * gas})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != types.ReceiptStatusFailed {
			t.Fatal("transferThenRevert did not revert")
		}
		s.mine(12)
		s.sync()
		if got := s.Intent(v.ID); got.Status != "awaiting_payment" || len(got.Transfers) != 0 {
			t.Fatalf("reverted transfer counted: %+v", got)
		}
		if after := s.Counts(); after["transfers"] != before["transfers"] {
			t.Fatalf("reverted transfer recorded: %v -> %v", before, after)
		}
	})

	t.Run("ZeroValuePoisoningIsDust", func(t *testing.T) {
		v := s.intent(payment.USDTERC20, "10.00")
		victim := newAddress(t)
		data, _ := contracts.TestToken.Call("transferFrom", victim, addrOf(v), big.NewInt(0))
		r, err := n.Send(ctx, ethdev.TxRequest{From: anvilAccount1, To: &n.usdt, Data: data})
		if err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("transferFrom(victim, intent, 0): %v", err)
		}
		s.sync()
		got := s.Intent(v.ID)
		tr := only(t, got)
		if got.Status != "awaiting_payment" || tr.AmountBaseUnits != "0" || tr.Classification != "dust" || tr.TxID != r.TxHash.Hex() {
			t.Fatalf("intent %s transfer %+v", got.Status, tr)
		}
		if in, ok := s.inbox()[tr.ID]; !ok || in.Classification != "dust" {
			t.Fatalf("finance inbox: %+v (listed %v)", in, ok)
		}
	})

	t.Run("TwoPaymentsAddUp", func(t *testing.T) {
		v := s.intent(payment.ETH, "50.00")
		total := amountOf(t, v)
		first := new(big.Int).Div(total, big.NewInt(3))
		s.payETH(v, first)
		s.sync()
		if got := s.Intent(v.ID); got.Status != "detected" || only(t, got).Classification != "partial" || got.ReceivedBaseUnits != first.String() {
			t.Fatalf("after the first part: %+v", got)
		}
		r := s.payETH(v, new(big.Int).Sub(total, first))
		s.mine(11)
		s.sync()
		got := s.Intent(v.ID)
		if got.Status != "paid" || len(got.Transfers) != 2 || got.ReceivedBaseUnits != total.String() || got.Overpaid {
			t.Fatalf("after both parts (second at %d): %+v", r.BlockNumber, got)
		}
		for _, tr := range got.Transfers {
			if tr.Classification != "settles" {
				t.Fatalf("transfer %+v", tr)
			}
		}
	})

	t.Run("InternalETHFromContractByTracing", func(t *testing.T) {
		v := s.intent(payment.ETH, "25.00")
		r := n.call(t, n.forwarder, contracts.Forwarder, amountOf(t, v), "forward", addrOf(v))
		s.sync()
		got := s.Intent(v.ID)
		tr := only(t, got)
		if got.Status != "detected" || tr.TxID != r.TxHash.Hex() || tr.Index != -2 || tr.AmountBaseUnits != v.AmountBaseUnits {
			t.Fatalf("internal payment: %s %+v", got.Status, tr)
		}
		if got = s.confirmETH(t, v, r); got.Transfers[0].Classification != "settles" {
			t.Fatalf("paid intent %+v", got)
		}
	})

	t.Run("RestartMidScan", func(t *testing.T) {
		var vs []views.Intent
		var first int64
		for i := range 3 {
			v := s.intent(payment.ETH, "25.00")
			r := s.payETH(v, amountOf(t, v))
			if i == 0 {
				first = r.BlockNumber.Int64()
			}
			s.mine(2)
			vs = append(vs, v)
		}
		before := s.Counts()
		// One step of the running scanner applies Parallel blocks of the
		// nine, then it "dies": a new scanner with a new client over the
		// same database takes over.
		if caughtUp, err := s.Scanners[payment.Ethereum].Step(ctx); err != nil || caughtUp {
			t.Fatalf("first step: caught up %v, %v", caughtUp, err)
		}
		mid := s.Counts()
		if mid["transfers"] == before["transfers"] || mid["transfers"] == before["transfers"]+3 {
			t.Fatalf("the first step should apply some of the payments: %d -> %d transfers", before["transfers"], mid["transfers"])
		}
		restarted := newClient(t, n.RPCURL, evm.TraceAuto, n.tokens, nil)
		s.Scanners[payment.Ethereum] = s.NewScanner(payment.Ethereum, restarted)
		s.mine(12)
		s.sync()
		after := s.Counts()
		if after["transfers"] != before["transfers"]+3 {
			t.Fatalf("transfers %d -> %d, want 3 more", before["transfers"], after["transfers"])
		}
		for _, v := range vs {
			got := s.Intent(v.ID)
			if got.Status != "paid" || only(t, got).Classification != "settles" || s.events("intent.paid", v.ID) != 1 {
				t.Fatalf("after restart: %+v", got)
			}
		}
		// An operator rescan replays the blocks: nothing is doubled.
		status, body := s.Do("POST", "/v1/networks/ethereum/rescan", "operator", map[string]any{"from_height": first})
		if status != 200 && status != 202 {
			t.Fatalf("rescan: %d %s", status, body)
		}
		s.sync()
		replayed := s.Counts()
		if replayed["transfers"] != after["transfers"] || replayed["events"] != after["events"] {
			t.Fatalf("rescan changed counts: %v -> %v", after, replayed)
		}
		for _, v := range vs {
			if got := s.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 {
				t.Fatalf("after rescan: %+v", got)
			}
		}
	})

	// Last: it moves the clock past every deadline.
	t.Run("Late", func(t *testing.T) {
		v := s.intent(payment.ETH, "25.00")
		s.Clock.Set(v.ExpiresAt.Add(time.Minute))
		s.payETH(v, amountOf(t, v))
		s.mine(11)
		s.sync()
		got := s.Intent(v.ID)
		tr := only(t, got)
		if got.Status == "paid" || !got.Late || tr.Classification != "late" || tr.Status != "confirmed" {
			t.Fatalf("late payment: %s late=%v %+v", got.Status, got.Late, tr)
		}
		if in, ok := s.inbox()[tr.ID]; !ok || in.Classification != "late" {
			t.Fatalf("finance inbox: %+v (listed %v)", in, ok)
		}
	})
}

// TestScanAnvilFinalized: with confirmations 0 (finality) an ETH payment is
// credited when anvil's finalized block reaches it (--slots-in-an-epoch 1:
// finalized = latest - 2).
func TestScanAnvilFinalized(t *testing.T) {
	n := startScanNode(t, "--slots-in-an-epoch", "1")
	zero := 0
	s := newScan(t, n, evm.TraceAuto, func(c *config.Config) { c.Methods[payment.ETH].Confirmations = &zero })
	ctx := context.Background()
	v := s.intent(payment.ETH, "25.00")
	if v.ConfirmationsRequired != 0 {
		t.Fatalf("confirmations required %d, want 0 (finalized)", v.ConfirmationsRequired)
	}
	r := s.payETH(v, amountOf(t, v))
	h := r.BlockNumber.Uint64()
	for i := 0; ; i++ {
		fin, err := s.src.FinalizedHeight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.sync()
		got := s.Intent(v.ID)
		if fin >= chains.Height(h) {
			if got.Status != "paid" || only(t, got).Status != "confirmed" {
				t.Fatalf("finalized %d >= payment block %d: %+v", fin, h, got)
			}
			if i == 0 {
				t.Fatal("the payment block was final at once; the test proves nothing")
			}
			return
		}
		if got.Status != "detected" || only(t, got).Status != "confirming" {
			t.Fatalf("finalized %d < payment block %d: %s %+v", fin, h, got.Status, got.Transfers)
		}
		if i > 10 {
			t.Fatalf("finalized height stuck at %d", fin)
		}
		s.mine(1)
	}
}

// TestScanAnvilReorg drops a payment with anvil_reorg before confirmation
// and after the intent was paid.
func TestScanAnvilReorg(t *testing.T) {
	n := startScanNode(t)
	s := newScan(t, n, evm.TraceAuto, nil)
	ctx := context.Background()
	reorgOut := func(r *types.Receipt) {
		t.Helper()
		tip, err := s.src.Tip(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Reorg(ctx, int(tip-chains.Height(r.BlockNumber.Uint64()))+1); err != nil {
			t.Fatal(err)
		}
		// anvil_reorg keeps the height; the next block shows the new branch.
		s.mine(1)
		s.sync()
	}

	t.Run("BeforeConfirmation", func(t *testing.T) {
		v := s.intent(payment.ETH, "25.00")
		r := s.payETH(v, amountOf(t, v))
		s.mine(3)
		s.sync()
		if got := s.Intent(v.ID); got.Status != "detected" {
			t.Fatalf("before reorg: %+v", got)
		}
		reorgOut(r)
		got := s.Intent(v.ID)
		if got.Status != "awaiting_payment" || only(t, got).Status != "orphaned" || got.ReceivedBaseUnits != "0" {
			t.Fatalf("after reorg: %s %+v", got.Status, got.Transfers)
		}
		s.mine(12)
		s.sync()
		if got := s.Intent(v.ID); got.Status != "awaiting_payment" {
			t.Fatalf("an orphaned transfer paid: %+v", got)
		}
	})

	t.Run("AfterPaid", func(t *testing.T) {
		v := s.CreateIntent("topup", "TOP-1", "cust-1", "100.00", string(payment.ETH))
		r := s.payETH(v, amountOf(t, v))
		s.mine(11)
		s.sync()
		if got := s.Intent(v.ID); got.Status != "paid" || s.events("ledger.credited", v.ID) != 1 {
			t.Fatalf("before reorg: %+v", got)
		}
		reorgOut(r)
		got := s.Intent(v.ID)
		tr := only(t, got)
		if got.Status != "reverted" || tr.Status != "orphaned" || tr.Classification != "reverted" {
			t.Fatalf("after reorg: %s %+v", got.Status, tr)
		}
		if s.events("intent.reverted", v.ID) != 1 || s.events("ledger.reversed", v.ID) != 1 {
			t.Fatalf("events: reverted %d, ledger.reversed %d", s.events("intent.reverted", v.ID), s.events("ledger.reversed", v.ID))
		}
		p, err := s.Store.PayableByReference(ctx, "", "topup", "TOP-1")
		if err != nil {
			t.Fatal(err)
		}
		if p.PaidAt != nil || p.PaidByIntent != "" {
			t.Fatalf("payable still paid after the reorg: %+v", p)
		}
		if in, ok := s.inbox()[tr.ID]; !ok || in.Classification != "reverted" {
			t.Fatalf("finance inbox: %+v (listed %v)", in, ok)
		}
	})
}

// TestScanAnvilBalanceCheck runs the scanner over a client that does not
// trace (trace: off): ETH sent to an intent by a contract is invisible in
// the block, and the balance check at confirmation depth turns it into an
// unexplained finance item that does not pay the intent by itself.
func TestScanAnvilBalanceCheck(t *testing.T) {
	n := startScanNode(t)
	s := newScan(t, n, evm.TraceOff, nil)
	if m := s.mode(); m != evm.ModeBalanceCheck {
		t.Fatalf("status mode %q, want %q", m, evm.ModeBalanceCheck)
	}

	a := s.intent(payment.ETH, "25.00")
	b := s.intent(payment.ETH, "50.00")
	amount := amountOf(t, a)
	r := n.call(t, n.forwarder, contracts.Forwarder, amount, "forward", addrOf(a))
	h := r.BlockNumber.Int64()
	// B gets half its amount directly: recorded, so explained.
	half := new(big.Int).Div(amountOf(t, b), big.NewInt(2))
	s.payETH(b, half)

	// Below confirmation depth the check does not look at block h yet.
	s.mine(9) // tip = h + 10
	s.sync()
	if got := s.Intent(a.ID); len(got.Transfers) != 0 || got.Status != "awaiting_payment" {
		t.Fatalf("before depth: %+v", got)
	}
	s.mine(1) // tip = h + 11: h has 12 confirmations
	s.sync()
	got := s.Intent(a.ID)
	tr := only(t, got)
	if tr.TxID != ingest.BalanceTxID(h) || tr.Index != ingest.BalanceIndex(addrOf(a).Bytes()) || tr.Asset != "ETH" ||
		tr.AmountBaseUnits != amount.String() || tr.Classification != payment.Unexplained || tr.Status != "confirmed" ||
		tr.BlockHeight == nil || *tr.BlockHeight != h {
		t.Fatalf("balance-check item %+v, want %s %s wei unexplained", tr, ingest.BalanceTxID(h), amount)
	}
	if got.Status != "awaiting_payment" || got.ReceivedBaseUnits != "0" {
		t.Fatalf("an unexplained item paid the intent: %+v", got)
	}
	if in, ok := s.inbox()[tr.ID]; !ok || in.Classification != payment.Unexplained {
		t.Fatalf("finance inbox: %+v (listed %v)", in, ok)
	}
	if st, body := s.Do("GET", "/v1/transfers?classification=unexplained", "finance", nil); st != 200 ||
		!json.Valid(body) || !strings.Contains(string(body), tr.ID) || strings.Count(string(body), `"classification":"unexplained"`) != 1 {
		t.Fatalf("inbox filtered on unexplained: %d %s", st, body)
	}
	if s.events("transfer.unmatched", a.ID) != 1 {
		t.Fatalf("transfer.unmatched events: %d", s.events("transfer.unmatched", a.ID))
	}
	if got := s.Intent(b.ID); got.Status != "detected" || only(t, got).Classification != "partial" {
		t.Fatalf("explained partial payment: %+v", got)
	}

	// More blocks, and a restarted scanner: the check finds nothing new.
	before := s.Counts()
	s.mine(3)
	s.sync()
	s.Scanners[payment.Ethereum] = s.NewScanner(payment.Ethereum, newClient(t, n.RPCURL, evm.TraceOff, n.tokens, nil))
	s.mine(1)
	s.sync()
	if after := s.Counts(); after["transfers"] != before["transfers"] || after["events"] != before["events"] {
		t.Fatalf("repeated checks recorded more: %v -> %v", before, after)
	}

	// A second internal payment to the same address is a new item.
	r2 := n.call(t, n.forwarder, contracts.Forwarder, big.NewInt(12345), "forward", addrOf(a))
	s.mine(11)
	s.sync()
	got = s.Intent(a.ID)
	if len(got.Transfers) != 2 || got.Transfers[1].AmountBaseUnits != "12345" || got.Transfers[1].TxID != ingest.BalanceTxID(r2.BlockNumber.Int64()) {
		t.Fatalf("second internal payment: %+v", got.Transfers)
	}

	// Finance credits the first item to the intent: now it pays.
	status, body := s.Do("POST", "/v1/transfers/"+tr.ID+"/resolve", "finance", map[string]string{
		"action": "credit_intent", "intent_id": a.ID, "note": "forwarded by a contract; checked on an explorer"})
	if status != 200 {
		t.Fatalf("resolve: %d %s", status, body)
	}
	if got := s.Intent(a.ID); got.Status != "paid" || got.Transfers[0].Classification != "settles" {
		t.Fatalf("after credit_intent: %+v", got)
	}
}

// TestScanRPCCallsPerBlock counts the JSON-RPC calls (batch elements) the
// whole scanner makes per block — tips, finality, blocks and, without
// tracing, the balance check — over ten blocks of one transaction each, with
// 10 and with 100,000 watched addresses: the same number.
func TestScanRPCCallsPerBlock(t *testing.T) {
	ctx := context.Background()
	for _, trace := range []string{evm.TraceAuto, evm.TraceOff} {
		t.Run("trace="+trace, func(t *testing.T) {
			// A node of its own: the same key on the same chain would give
			// this intent an address that already holds the other's ETH.
			n := startScanNode(t)
			s := newScan(t, n, trace, nil)
			v := s.intent(payment.ETH, "25.00") // open: the balance check reads its address
			calls := map[int]int64{}
			for _, size := range []int{10, 100_000} {
				rt := &countingTransport{base: http.DefaultTransport}
				src := newClient(t, n.RPCURL, trace, n.tokens, rt)
				w := chains.NewWatchSet(size)
				w.Add(addrOf(v).Bytes())
				for w.Len() < size {
					w.Add(newAddress(t).Bytes())
				}
				cur, err := s.Sink.Cursor(ctx, payment.Ethereum)
				if err != nil {
					t.Fatal(err)
				}
				sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Ethereum, Parallel: 4, SafetyDepth: 64},
					src, s.Sink.ScannerSinks(), nil, w, nil)
				before := s.Counts()["transfers"]
				for i := range 10 {
					to := newAddress(t)
					if i == 3 {
						to = addrOf(v)
					}
					if _, err := n.SendETH(ctx, to, big.NewInt(1e9)); err != nil {
						t.Fatal(err)
					}
				}
				tip, err := src.Tip(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if tip-cur.Height != 10 {
					t.Fatalf("%d new blocks, want 10", tip-cur.Height)
				}
				c0 := rt.calls.Load()
				for steps := 0; ; steps++ {
					caughtUp, err := sc.Step(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if caughtUp {
						break
					}
					if steps > 100 {
						t.Fatal("not caught up")
					}
				}
				calls[size] = rt.calls.Load() - c0
				if got := s.Counts()["transfers"] - before; got != 1 {
					t.Fatalf("%d watched: %d transfers recorded, want 1", size, got)
				}
			}
			t.Logf("trace=%s (%s): JSON-RPC calls for 10 blocks through the scanner: %d with 10 watched, %d with 100000 watched (%.1f per block)",
				trace, s.src.TraceMode(), calls[10], calls[100_000], float64(calls[10])/10)
			if calls[10] != calls[100_000] || calls[10] == 0 {
				t.Fatalf("calls %d (10 watched) vs %d (100000 watched)", calls[10], calls[100_000])
			}
		})
	}
}
