package bitcoin

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	btcchaincfg "github.com/btcsuite/btcd/chaincfg"
	btctxscript "github.com/btcsuite/btcd/txscript"
	ltcchaincfg "github.com/ltcsuite/ltcd/chaincfg"
	"github.com/ltcsuite/ltcd/ltcutil"
	ltctxscript "github.com/ltcsuite/ltcd/txscript"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// nodeClient returns a Client for a devnet node. Its idle connections are
// closed before the node stops (cleanups run last-in first-out): Litecoin
// Core's shutdown waits for open keep-alive connections.
func nodeClient(t *testing.T, network payment.Network, url string) *Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := New(Config{Network: network, Chain: Regtest, URL: url, HTTPClient: &http.Client{Transport: tr, Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// btcdChain drives a btcd regtest node for the conformance suite.
type btcdChain struct {
	node *devnet.Btcd
	src  *Client
	n    int
}

func startBtcdChain(t *testing.T) *btcdChain {
	t.Helper()
	node, err := devnet.StartBtcd(testCtx(t), t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	return &btcdChain{node: node, src: nodeClient(t, payment.Bitcoin, node.RPCURL)}
}

func (c *btcdChain) Source() chains.Source { return c.src }

// NewAddress rotates through P2WPKH, P2PKH, P2TR and P2SH so every address
// form is rendered and matched.
func (c *btcdChain) NewAddress(t *testing.T) ([]byte, string) {
	t.Helper()
	params := &btcchaincfg.RegressionNetParams
	var addr btcutil.Address
	var err error
	switch c.n % 4 {
	case 0:
		addr, err = btcutil.NewAddressWitnessPubKeyHash(randomBytes(t, 20), params)
	case 1:
		addr, err = btcutil.NewAddressPubKeyHash(randomBytes(t, 20), params)
	case 2:
		addr, err = btcutil.NewAddressTaproot(randomBytes(t, 32), params)
	default:
		addr, err = btcutil.NewAddressScriptHashFromHash(randomBytes(t, 20), params)
	}
	c.n++
	if err != nil {
		t.Fatal(err)
	}
	script, err := btctxscript.PayToAddrScript(addr)
	if err != nil {
		t.Fatal(err)
	}
	return script, addr.EncodeAddress()
}

func (c *btcdChain) script(t *testing.T, address string) []byte {
	t.Helper()
	addr, err := btcutil.DecodeAddress(address, &btcchaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	script, err := btctxscript.PayToAddrScript(addr)
	if err != nil {
		t.Fatal(err)
	}
	return script
}

func (c *btcdChain) Pay(t *testing.T, address string, _ payment.Asset, amount *big.Int) string {
	t.Helper()
	ctx := testCtx(t)
	txid, err := c.node.Pay(ctx, c.script(t, address), amount.Int64())
	if err != nil {
		t.Fatal(err)
	}
	c.Mine(t, 1)
	return txid
}

func (c *btcdChain) Mine(t *testing.T, n int) {
	t.Helper()
	if _, err := c.node.Generate(testCtx(t), n); err != nil {
		t.Fatal(err)
	}
}

// Reorg invalidates the block at tip-depth+1 and mines depth new blocks. A
// fresh faucet transaction makes the first replacement differ from the
// invalidated block even when both would otherwise be empty and mined in the
// same second.
func (c *btcdChain) Reorg(t *testing.T, depth int) {
	t.Helper()
	ctx := testCtx(t)
	tip, err := c.node.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := c.node.BlockHash(ctx, tip-int64(depth)+1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.node.InvalidateBlock(ctx, hash); err != nil {
		t.Fatal(err)
	}
	if _, err := c.node.Pay(ctx, c.node.FaucetScript(), 10_000); err != nil {
		t.Fatal(err)
	}
	c.Mine(t, depth)
}

func (c *btcdChain) Asset() payment.Asset { return payment.Native }
func (c *btcdChain) Amount() *big.Int     { return big.NewInt(25_000) }

// litecoindChain drives a Litecoin Core regtest node for the suite.
type litecoindChain struct {
	node *devnet.Litecoind
	src  *Client
	n    int
}

func startLitecoindChain(t *testing.T, mweb bool) *litecoindChain {
	t.Helper()
	node, err := devnet.StartLitecoind(testCtx(t), t.TempDir(), 0, mweb)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "litecoind", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	return &litecoindChain{node: node, src: nodeClient(t, payment.Litecoin, node.RPCURL)}
}

func (c *litecoindChain) Source() chains.Source { return c.src }

// NewAddress rotates through P2WPKH, P2PKH, P2TR and P2SH (Litecoin's M/Q
// form).
func (c *litecoindChain) NewAddress(t *testing.T) ([]byte, string) {
	t.Helper()
	params := &ltcchaincfg.RegressionNetParams
	var addr ltcutil.Address
	var err error
	switch c.n % 4 {
	case 0:
		addr, err = ltcutil.NewAddressWitnessPubKeyHash(randomBytes(t, 20), params)
	case 1:
		addr, err = ltcutil.NewAddressPubKeyHash(randomBytes(t, 20), params)
	case 2:
		addr, err = ltcutil.NewAddressTaproot(randomBytes(t, 32), params)
	default:
		addr, err = ltcutil.NewAddressScriptHashFromHash(randomBytes(t, 20), params)
	}
	c.n++
	if err != nil {
		t.Fatal(err)
	}
	script, err := ltctxscript.PayToAddrScript(addr)
	if err != nil {
		t.Fatal(err)
	}
	return script, addr.EncodeAddress()
}

func (c *litecoindChain) Pay(t *testing.T, address string, _ payment.Asset, amount *big.Int) string {
	t.Helper()
	txid, err := c.node.SendToAddress(testCtx(t), address, amount.Int64())
	if err != nil {
		t.Fatal(err)
	}
	c.Mine(t, 1)
	return txid
}

func (c *litecoindChain) Mine(t *testing.T, n int) {
	t.Helper()
	if _, err := c.node.Generate(testCtx(t), n); err != nil {
		t.Fatal(err)
	}
}

// Reorg invalidates the block at tip-depth+1 and mines depth new blocks
// (Generate pays a fresh address, so the replacements differ).
func (c *litecoindChain) Reorg(t *testing.T, depth int) {
	t.Helper()
	ctx := testCtx(t)
	tip, err := c.node.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := c.node.BlockHash(ctx, tip-int64(depth)+1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.node.InvalidateBlock(ctx, hash); err != nil {
		t.Fatal(err)
	}
	c.Mine(t, depth)
}

func (c *litecoindChain) Asset() payment.Asset { return payment.Native }
func (c *litecoindChain) Amount() *big.Int     { return big.NewInt(250_000) }

func TestConformanceBtcd(t *testing.T) {
	c := startBtcdChain(t)
	if err := c.src.Health(testCtx(t)); err != nil {
		t.Fatalf("Health: %v", err)
	}
	chainstest.Run(t, c)
}

func TestConformanceLitecoind(t *testing.T) {
	c := startLitecoindChain(t, false)
	if err := c.src.Health(testCtx(t)); err != nil {
		t.Fatalf("Health: %v", err)
	}
	chainstest.Run(t, c)
}

func TestConformanceLitecoindMWEB(t *testing.T) {
	c := startLitecoindChain(t, true)
	ctx := testCtx(t)
	if err := c.node.ActivateMWEB(ctx); err != nil {
		t.Fatalf("ActivateMWEB: %v", err)
	}
	chainstest.Run(t, c)

	// The blocks the suite mined carry a HogEx and an MWEB block; their
	// HogEx outputs are scanned like any other output.
	tip, err := c.src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.src.RawBlock(ctx, tip)
	if err != nil {
		t.Fatal(err)
	}
	hogex := lastTxIfHogEx(t, raw)
	if hogex == nil {
		t.Fatalf("block %d has no HogEx", tip)
	}
	w := chains.NewWatchSet(1)
	w.Add(hogex.TxOut[0].PkScript)
	b, err := c.src.Block(ctx, tip, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 || b.Transfers[0].TxID != hogex.TxHash().String() || b.Transfers[0].Amount.Int64() != hogex.TxOut[0].Value {
		t.Fatalf("HogEx output not reported: %+v", b.Transfers)
	}

	// A mempool holding an MWEB-only transaction (the wallet pays an MWEB
	// address from the coins ActivateMWEB pegged in) decodes, its txid
	// checks out, and a canonical payment beside it is pending.
	mwebAddr, err := c.node.NewAddress(ctx, "mweb")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.node.SendToAddress(ctx, mwebAddr, 50_000_000); err != nil {
		t.Fatalf("MWEB send: %v", err)
	}
	key, addr := c.NewAddress(t)
	txid, err := c.node.SendToAddress(ctx, addr, 777_000)
	if err != nil {
		t.Fatal(err)
	}
	var pool []string
	if err := c.node.Call(ctx, "getrawmempool", &pool); err != nil {
		t.Fatal(err)
	}
	pure := 0
	for _, id := range pool {
		var rawHex string
		if err := c.node.Call(ctx, "getrawtransaction", &rawHex, id, 0); err != nil {
			t.Fatal(err)
		}
		if pureMWEBTx(t, rawHex) {
			pure++
		}
	}
	if pure == 0 {
		t.Fatalf("no MWEB-only transaction in the mempool %v", pool)
	}
	w = chains.NewWatchSet(1)
	w.Add(key)
	checkPending(t, c.src, w, txid, map[string]int64{addr: 777_000})
	c.Mine(t, 1)
	if got, err := c.src.Pending(ctx, w); err != nil || len(got) != 0 {
		t.Fatalf("Pending after mining = %+v, %v", got, err)
	}
	tip, _ = c.src.Tip(ctx)
	if b, err = c.src.Block(ctx, tip, w); err != nil || len(b.Transfers) != 1 || b.Transfers[0].TxID != txid {
		t.Fatalf("Block(%d) = %+v, %v", tip, b.Transfers, err)
	}
}
