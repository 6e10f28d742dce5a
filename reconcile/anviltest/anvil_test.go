package anviltest_test

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/intents/intentstest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/reconcile/reconciletest"
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
	e := intentstest.New(t, intentstest.Only(payment.Ethereum), intentstest.WithSource(payment.Ethereum, src),
		intentstest.WithConfig(func(c *config.Config) { c.Networks[string(payment.Ethereum)].Trace = evm.TraceOff }))
	c := &reconciletest.Chain{N: payment.Ethereum, E: e, Method: "ETH", View: &reconcile.BlockView{Source: src, Watched: e.Watch[payment.Ethereum], CallsPerBlock: 2},
		Pay: func(t *testing.T, v views.Intent) string {
			h, err := a.SendETH(reconciletest.Ctx(t), common.HexToAddress(v.Address), intentstest.Units(v.AmountBaseUnits))
			if err != nil {
				t.Fatal(err)
			}
			return h.Hex()
		}}
	reconciletest.LostTransferFound(t, c)
}
