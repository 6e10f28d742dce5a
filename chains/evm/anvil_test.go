package evm_test

import (
	"context"
	"crypto/rand"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
)

// node is an anvil with the test tokens deployed.
type node struct {
	*ethdev.Anvil
	usdt, usdc, fake common.Address // fake: a look-alike "USDT" nobody configured
	forwarder        common.Address
	reverter         common.Address
	tokens           []evm.Token
}

func startNode(t *testing.T) *node {
	t.Helper()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0)
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

func (n *node) client(t *testing.T, trace string, rt *countingTransport) *evm.Client {
	t.Helper()
	if rt != nil {
		return newClient(t, n.RPCURL, trace, n.tokens, rt)
	}
	return newClient(t, n.RPCURL, trace, n.tokens, nil)
}

func newAddress(t testing.TB) common.Address {
	t.Helper()
	var a common.Address
	if _, err := rand.Read(a[:]); err != nil {
		t.Fatal(err)
	}
	return a
}

// call sends calldata to contract and returns the mined receipt (status 1).
func (n *node) call(t *testing.T, to common.Address, c *contracts.Contract, value *big.Int, method string, args ...any) *types.Receipt {
	t.Helper()
	data, err := c.Call(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Send(context.Background(), ethdev.TxRequest{To: &to, Value: value, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("%s.%s reverted", c.Name, method)
	}
	return r
}

// blockOf returns the source's view of the block that holds receipt r.
func blockOf(t *testing.T, src *evm.Client, r *types.Receipt, w chains.Watched) chains.Block {
	t.Helper()
	b, err := src.Block(context.Background(), chains.Height(r.BlockNumber.Uint64()), w)
	if err != nil {
		t.Fatalf("Block(%d): %v", r.BlockNumber, err)
	}
	if b.Hash != r.BlockHash.Hex() {
		t.Fatalf("Block(%d) hash %s, receipt says %s", r.BlockNumber, b.Hash, r.BlockHash.Hex())
	}
	return b
}

func receipt(t *testing.T, n *node, h common.Hash) *types.Receipt {
	t.Helper()
	r, err := n.WaitReceipt(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// anvilChain drives the conformance suite with ETH payments.
type anvilChain struct {
	n   *node
	src *evm.Client
}

func (c *anvilChain) Source() chains.Source { return c.src }
func (c *anvilChain) NewAddress(t *testing.T) ([]byte, string) {
	a := newAddress(t)
	return a.Bytes(), a.Hex()
}
func (c *anvilChain) Pay(t *testing.T, address string, asset payment.Asset, amount *big.Int) string {
	if asset != payment.Native || !common.IsHexAddress(address) {
		t.Fatalf("Pay(%s, %s)", address, asset)
	}
	h, err := c.n.SendETH(context.Background(), common.HexToAddress(address), amount)
	if err != nil {
		t.Fatal(err)
	}
	return h.Hex()
}
func (c *anvilChain) Mine(t *testing.T, k int) {
	if err := c.n.Mine(context.Background(), k); err != nil {
		t.Fatal(err)
	}
}
func (c *anvilChain) Reorg(t *testing.T, depth int) {
	if err := c.n.Reorg(context.Background(), depth); err != nil {
		t.Fatal(err)
	}
}
func (c *anvilChain) Asset() payment.Asset { return payment.Native }
func (c *anvilChain) Amount() *big.Int     { return big.NewInt(1_000_000_000_000_000) } // 0.001 ETH

func TestConformance(t *testing.T) {
	n := startNode(t)
	chainstest.Run(t, &anvilChain{n: n, src: n.client(t, evm.TraceAuto, nil)})
}

func TestAnvil(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	src := n.client(t, evm.TraceAuto, nil)
	if src.TraceMode() != evm.ModeTrace {
		t.Fatalf("anvil answers debug_traceBlockByHash, but TraceMode = %s", src.TraceMode())
	}

	t.Run("ETHExact", func(t *testing.T) {
		payee, other := newAddress(t), newAddress(t)
		wei, _ := new(big.Int).SetString("1234567890123456789", 10)
		h, err := n.SendETH(ctx, payee, wei)
		if err != nil {
			t.Fatal(err)
		}
		b := blockOf(t, src, receipt(t, n, h), watch(payee, other))
		if len(b.Transfers) != 1 {
			t.Fatalf("transfers %+v", b.Transfers)
		}
		tr := b.Transfers[0]
		if tr.TxID != h.Hex() || tr.Index != chains.NativeIndex || tr.Asset != payment.Native ||
			tr.Amount.Cmp(wei) != 0 || tr.Address != payee.Hex() || string(tr.Key) != string(payee.Bytes()) {
			t.Fatalf("transfer %+v amount %s", tr, tr.Amount)
		}
	})

	t.Run("USDTExact", func(t *testing.T) {
		payee := newAddress(t)
		h, err := n.TransferToken(ctx, n.usdt, payee, big.NewInt(4_361_142_255))
		if err != nil {
			t.Fatal(err)
		}
		r := receipt(t, n, h)
		b := blockOf(t, src, r, watch(payee))
		if len(b.Transfers) != 1 {
			t.Fatalf("transfers %+v", b.Transfers)
		}
		tr := b.Transfers[0]
		if tr.TxID != h.Hex() || tr.Index != int64(r.Logs[0].Index) || tr.Asset != payment.USDT ||
			tr.Amount.Int64() != 4_361_142_255 || tr.Address != payee.Hex() {
			t.Fatalf("transfer %+v amount %s", tr, tr.Amount)
		}
	})

	t.Run("USDCReportedAsUSDC", func(t *testing.T) {
		payee := newAddress(t)
		h, err := n.TransferToken(ctx, n.usdc, payee, big.NewInt(10_000_000))
		if err != nil {
			t.Fatal(err)
		}
		b := blockOf(t, src, receipt(t, n, h), watch(payee))
		if len(b.Transfers) != 1 || b.Transfers[0].Asset != payment.USDC || b.Transfers[0].Amount.Int64() != 10_000_000 {
			t.Fatalf("transfers %+v", b.Transfers)
		}
	})

	t.Run("LookAlikeTokenIgnored", func(t *testing.T) {
		payee := newAddress(t)
		h, err := n.TransferToken(ctx, n.fake, payee, big.NewInt(10_000_000))
		if err != nil {
			t.Fatal(err)
		}
		r := receipt(t, n, h)
		if len(r.Logs) != 1 || common.BytesToAddress(r.Logs[0].Topics[2].Bytes()) != payee {
			t.Fatalf("look-alike transfer did not emit its Transfer: %+v", r.Logs)
		}
		if b := blockOf(t, src, r, watch(payee)); len(b.Transfers) != 0 {
			t.Fatalf("look-alike token reported: %+v", b.Transfers)
		}
	})

	t.Run("RevertedTokenTransferIgnored", func(t *testing.T) {
		payee := newAddress(t)
		data, _ := contracts.TestToken.Call("transferThenRevert", payee, big.NewInt(5_000_000))
		gas := estimate(t, n, n.usdt, contracts.TestToken, "transfer", payee, big.NewInt(5_000_000))
		r, err := n.Send(ctx, ethdev.TxRequest{To: &n.usdt, Data: data, Gas: 3 * gas})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != types.ReceiptStatusFailed {
			t.Fatal("transferThenRevert did not revert")
		}
		if b := blockOf(t, src, r, watch(payee)); len(b.Transfers) != 0 {
			t.Fatalf("reverted token transfer reported: %+v", b.Transfers)
		}
	})

	t.Run("RevertedETHIgnored", func(t *testing.T) {
		// The Reverter (watched) refuses ETH: the transaction is mined with
		// status 0 and its value never arrives.
		gas, err := n.Eth.EstimateGas(ctx, callMsgTo(newAddress(t), big.NewInt(1)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := n.Send(ctx, ethdev.TxRequest{To: &n.reverter, Value: big.NewInt(1e15), Gas: 3 * gas})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != types.ReceiptStatusFailed {
			t.Fatal("payment to the Reverter did not revert")
		}
		if b := blockOf(t, src, r, watch(n.reverter)); len(b.Transfers) != 0 {
			t.Fatalf("reverted ETH payment reported: %+v", b.Transfers)
		}
	})

	t.Run("ZeroValuePoisoningReported", func(t *testing.T) {
		// An attacker calls transferFrom(victim, payee, 0): no allowance is
		// needed, the real contract emits Transfer(victim, payee, 0).
		payee, victim := newAddress(t), newAddress(t)
		attacker := common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8") // anvil dev account 1
		data, _ := contracts.TestToken.Call("transferFrom", victim, payee, big.NewInt(0))
		r, err := n.Send(ctx, ethdev.TxRequest{From: attacker, To: &n.usdt, Data: data})
		if err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("transferFrom(0): %v", err)
		}
		b := blockOf(t, src, r, watch(payee))
		if len(b.Transfers) != 1 || b.Transfers[0].Amount.Sign() != 0 || b.Transfers[0].Asset != payment.USDT ||
			b.Transfers[0].Index != int64(r.Logs[0].Index) {
			t.Fatalf("poisoning transfer %+v, want one USDT transfer of 0", b.Transfers)
		}
	})

	t.Run("InternalETHByTracing", func(t *testing.T) {
		payee := newAddress(t)
		r := n.call(t, n.forwarder, contracts.Forwarder, big.NewInt(3e15), "forward", payee)
		b := blockOf(t, src, r, watch(payee, n.forwarder))
		// The forwarder is the top-level recipient: native transfer; payee
		// got the ETH through an internal CALL: index -2.
		if len(b.Transfers) != 2 {
			t.Fatalf("transfers %+v", b.Transfers)
		}
		top, inner := b.Transfers[0], b.Transfers[1]
		if top.Index != chains.NativeIndex || top.Address != n.forwarder.Hex() || top.Amount.Int64() != 3e15 {
			t.Fatalf("top-level transfer %+v", top)
		}
		if inner.Index != -2 || inner.Address != payee.Hex() || inner.Amount.Int64() != 3e15 || inner.TxID != r.TxHash.Hex() || inner.Asset != payment.Native {
			t.Fatalf("internal transfer %+v", inner)
		}

		r = n.call(t, n.forwarder, contracts.Forwarder, big.NewInt(5e15+1), "forwardTwice", payee)
		b = blockOf(t, src, r, watch(payee))
		if len(b.Transfers) != 2 || b.Transfers[0].Index == b.Transfers[1].Index ||
			new(big.Int).Add(b.Transfers[0].Amount, b.Transfers[1].Amount).Int64() != 5e15+1 {
			t.Fatalf("forwardTwice transfers %+v", b.Transfers)
		}
		for _, tr := range b.Transfers {
			if tr.Index >= chains.NativeIndex {
				t.Fatalf("internal transfer with index %d", tr.Index)
			}
		}

		// A failed inner CALL (the Reverter refuses) moves nothing.
		r = n.call(t, n.forwarder, contracts.Forwarder, big.NewInt(1e15), "forwardAndSwallow", n.reverter)
		if b := blockOf(t, src, r, watch(n.reverter)); len(b.Transfers) != 0 {
			t.Fatalf("failed internal call reported: %+v", b.Transfers)
		}
	})

	t.Run("InternalETHByBalanceCheck", func(t *testing.T) {
		off := n.client(t, evm.TraceOff, nil)
		if off.TraceMode() != evm.ModeBalanceCheck {
			t.Fatalf("TraceMode = %s", off.TraceMode())
		}
		payee := newAddress(t)
		r := n.call(t, n.forwarder, contracts.Forwarder, big.NewInt(7e15), "forward", payee)
		h := r.BlockNumber.Uint64()
		if b := blockOf(t, off, r, watch(payee)); len(b.Transfers) != 0 {
			t.Fatalf("untraced client reported %+v", b.Transfers)
		}
		before, err := off.Balances(ctx, []common.Address{payee, n.forwarder}, chains.Height(h-1))
		if err != nil {
			t.Fatal(err)
		}
		after, err := off.Balances(ctx, []common.Address{payee, n.forwarder}, chains.Height(h))
		if err != nil {
			t.Fatal(err)
		}
		if got := new(big.Int).Sub(after[payee], before[payee]); got.Int64() != 7e15 {
			t.Fatalf("balance of payee grew by %s, want 7e15", got)
		}
		if after[n.forwarder].Cmp(before[n.forwarder]) != 0 {
			t.Fatalf("forwarder kept ETH: %s -> %s", before[n.forwarder], after[n.forwarder])
		}
	})

	t.Run("ReorgDropsPayment", func(t *testing.T) {
		payee := newAddress(t)
		h, err := n.SendETH(ctx, payee, big.NewInt(42))
		if err != nil {
			t.Fatal(err)
		}
		r := receipt(t, n, h)
		height := r.BlockNumber.Uint64()
		b := blockOf(t, src, r, watch(payee))
		if len(b.Transfers) != 1 {
			t.Fatalf("before reorg: %+v", b.Transfers)
		}
		tip, _ := src.Tip(ctx)
		if err := n.Reorg(ctx, int(tip-chains.Height(height))+1); err != nil {
			t.Fatal(err)
		}
		after, err := src.Block(ctx, chains.Height(height), watch(payee))
		if err != nil {
			t.Fatal(err)
		}
		if after.Hash == b.Hash || after.Parent != b.Parent {
			t.Fatalf("after reorg block %d: hash %s parent %s; before hash %s parent %s", height, after.Hash, after.Parent, b.Hash, b.Parent)
		}
		if len(after.Transfers) != 0 {
			t.Fatalf("payment survived the reorg: %+v", after.Transfers)
		}
	})
}

// TestRPCCallsIndependentOfWatchedSet counts the JSON-RPC calls of Block on
// a block with an ETH payment, a USDT and a USDC transfer, with 10 and with
// 100,000 watched addresses.
func TestRPCCallsIndependentOfWatchedSet(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	payee := newAddress(t)
	// Three transactions in one block: automine off, then mine.
	if err := n.RPC.CallContext(ctx, nil, "evm_setAutomine", false); err != nil {
		t.Fatal(err)
	}
	var hashes []common.Hash
	for _, req := range []ethdev.TxRequest{
		{To: &payee, Value: big.NewInt(1e15)},
		{To: &n.usdt, Data: mustData(t, "transfer", payee, big.NewInt(1_000_000))},
		{To: &n.usdc, Data: mustData(t, "transfer", payee, big.NewInt(2_000_000))},
	} {
		arg := map[string]any{"from": ethdev.AnvilDevAccount, "to": req.To}
		if req.Value != nil {
			arg["value"] = "0x" + req.Value.Text(16)
		}
		if req.Data != nil {
			arg["data"] = "0x" + common.Bytes2Hex(req.Data)
		}
		var h common.Hash
		if err := n.RPC.CallContext(ctx, &h, "eth_sendTransaction", arg); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
	}
	if err := n.RPC.CallContext(ctx, nil, "evm_mine"); err != nil {
		t.Fatal(err)
	}
	if err := n.RPC.CallContext(ctx, nil, "evm_setAutomine", true); err != nil {
		t.Fatal(err)
	}
	r := receipt(t, n, hashes[2])
	if r0 := receipt(t, n, hashes[0]); r0.BlockNumber.Cmp(r.BlockNumber) != 0 {
		t.Fatalf("transactions in blocks %s and %s", r0.BlockNumber, r.BlockNumber)
	}

	for _, trace := range []string{evm.TraceAuto, evm.TraceOff} {
		rt := &countingTransport{base: http.DefaultTransport}
		src := n.client(t, trace, rt)
		counts := map[int]int64{}
		for _, size := range []int{10, 100_000} {
			w := chains.NewWatchSet(size)
			w.Add(payee.Bytes())
			for w.Len() < size {
				w.Add(newAddress(t).Bytes())
			}
			before := rt.calls.Load()
			b := blockOf(t, src, r, w)
			counts[size] = rt.calls.Load() - before
			if len(b.Transfers) != 3 {
				t.Fatalf("%d watched: transfers %+v", size, b.Transfers)
			}
		}
		t.Logf("trace=%s (%s): JSON-RPC calls per Block: %d with 10 watched, %d with 100000 watched", trace, src.TraceMode(), counts[10], counts[100_000])
		if counts[10] != counts[100_000] || counts[10] == 0 {
			t.Fatalf("trace=%s: calls per block %d (10 watched) vs %d (100000 watched)", trace, counts[10], counts[100_000])
		}
	}
}

func mustData(t *testing.T, method string, args ...any) []byte {
	t.Helper()
	d, err := contracts.TestToken.Call(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFinalizedOnAnvil checks FinalizedHeight against anvil's arithmetic
// finality: with --slots-in-an-epoch 1, finalized = latest - 2.
func TestFinalizedOnAnvil(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0, "--slots-in-an-epoch", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	src := newClient(t, a.RPCURL, evm.TraceAuto, nil, nil)
	if err := a.Mine(ctx, 10); err != nil {
		t.Fatal(err)
	}
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fin, err := src.FinalizedHeight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tip != 10 || fin != tip-2 {
		t.Fatalf("tip %d finalized %d, want 10 and 8", tip, fin)
	}
}
