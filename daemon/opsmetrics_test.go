package daemon_test

import (
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// Issue 36 item 8: with no webhook endpoint configured the outbox gauges
// are present and zero (endpoint=""), and the open reconciler findings are
// exported as zero for every network and kind, so an alert or a panel tells
// "none" from "not exported".
func TestOutboxAndFindingGaugesArePresentWhenZero(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	if len(e.Config.Webhooks) != 0 {
		t.Fatalf("the test environment configures webhooks: %+v", e.Config.Webhooks)
	}
	mfs, err := e.Daemon.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, mf := range mfs {
		series := map[string]float64{}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + ","
			}
			series[key] = m.GetGauge().GetValue()
		}
		got[mf.GetName()] = series
	}
	for _, name := range []string{"paywatch_webhook_outbox_pending", "paywatch_webhook_outbox_oldest_age_seconds"} {
		if v, ok := got[name]["endpoint=,"]; !ok || v != 0 {
			t.Errorf("%s without endpoints: %v, want endpoint=\"\" 0", name, got[name])
		}
	}
	for _, n := range payment.Networks {
		for _, kind := range []string{"missing", "unexpected", "mismatch", "node_error"} {
			key := "kind=" + kind + ",network=" + string(n) + ",status=open,"
			if v, ok := got["paywatch_reconcile_findings"][key]; !ok || v != 0 {
				t.Errorf("paywatch_reconcile_findings{%s}: %v %v, want a present 0", key, v, ok)
			}
		}
	}
}
