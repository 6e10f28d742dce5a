package anviltest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/paywatchtest/reconciletest"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/views"
)

// On a real anvil (in its own package: go-ethereum's secp256k1 and
// Litecoin's cannot be linked into one test binary).
func TestReconcileLostTransferAnvil(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	a, err := ethdev.StartAnvil(reconciletest.Ctx(t), bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	src, err := evm.New(reconciletest.Ctx(t), evm.Config{URL: a.RPCURL, Trace: evm.TraceOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithSource(payment.Ethereum, src),
		paywatchtest.WithConfig(func(c *config.Config) { c.Networks[payment.Ethereum].Trace = evm.TraceOff }))
	c := &reconciletest.Chain{N: payment.Ethereum, E: e, Method: "ETH", View: &reconcile.BlockView{Source: src, Watched: e.Watch[payment.Ethereum], CallsPerBlock: 2},
		Pay: func(t *testing.T, v views.Intent) string {
			h, err := a.SendETH(reconciletest.Ctx(t), common.HexToAddress(v.Address), paywatchtest.Units(v.AmountBaseUnits))
			if err != nil {
				t.Fatal(err)
			}
			return h.Hex()
		}}
	reconciletest.LostTransferFound(t, c)
}

// The cost to anvil of one run over 1,000 blocks, counted at the HTTP layer.
func TestReconcileCallsPer1000BlocksAnvil(t *testing.T) {
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	a, err := ethdev.StartAnvil(reconciletest.Ctx(t), bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	src, err := evm.New(reconciletest.Ctx(t), evm.Config{URL: a.RPCURL, Trace: evm.TraceOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	counter := &reconciletest.CountingTransport{Base: http.DefaultTransport}
	view, err := evm.New(reconciletest.Ctx(t), evm.Config{URL: a.RPCURL, Trace: evm.TraceOff,
		HTTPClient: &http.Client{Transport: counter, Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(view.Close)
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum), paywatchtest.WithSource(payment.Ethereum, src),
		paywatchtest.WithConfig(func(c *config.Config) { c.Networks[payment.Ethereum].Trace = evm.TraceOff }))
	e.Sync(payment.Ethereum) // the scanner starts at the tip
	if err := a.Mine(reconciletest.Ctx(t), 1000); err != nil {
		t.Fatal(err)
	}
	e.Sync(payment.Ethereum)
	c := &reconciletest.Chain{N: payment.Ethereum, E: e, View: &reconcile.BlockView{Source: view, Watched: e.Watch[payment.Ethereum]}}
	got := reconciletest.CallsPerRun(t, c, 1000, counter)
	t.Logf("ethereum (anvil): %d node calls for a reconcile run over 1000 blocks", got)
	if got < 1000 {
		t.Fatalf("%d calls for 1,000 blocks: fewer than one a block", got)
	}
}
