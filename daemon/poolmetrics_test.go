package daemon_test

import (
	"fmt"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// Issue 22, item 5: the remaining address pool and the derivation gap are
// metrics. Three intents take three derived addresses; the first is paid,
// so two were handed out after the last paid one.
func TestAddressPoolAndDerivationGapMetrics(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Solana))
	for i, ref := range []string{"ORD-G1", "ORD-G2", "ORD-G3"} {
		v := e.CreateIntent("order", ref, "", "10.00", "BTC")
		if i == 0 {
			e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "gap-pay")
			e.Sync(payment.Bitcoin)
		}
	}
	e.CreateIntent("order", "ORD-G4", "", "10.00", "SOL") // 10 imported, 9 left
	stats, err := e.Store.AddressPoolStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var btcFree int64 = -1
	for _, s := range stats {
		if s.Network == "bitcoin" {
			btcFree = s.Free
		}
	}
	if btcFree < 0 {
		t.Fatalf("no bitcoin figures: %+v", stats)
	}
	// As the daemon exports them.
	mfs, err := e.Daemon.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if name := mf.GetName(); name != "paywatch_address_pool_free" && name != "paywatch_derivation_gap" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[mf.GetName()+"/"+m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"paywatch_address_pool_free/bitcoin": float64(btcFree), "paywatch_address_pool_free/solana": 9,
		"paywatch_derivation_gap/bitcoin": 2, "paywatch_derivation_gap/solana": 0,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
}
