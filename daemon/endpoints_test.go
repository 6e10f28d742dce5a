package daemon

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/payment"
)

// Issue 33 item 6: each endpoint is exported by network and name; its URL
// and key are in no metric.
func TestEndpointMetricsNameEndpointsNotURLs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }))
	defer srv.Close()
	secretURL := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1) + "/KEYPATH"
	p, err := endpoints.New([]endpoints.Spec{{Name: "trongrid", URL: secretURL, Scans: true, RatePerSecond: 10, Burst: 10, DailyBudget: 100}}, endpoints.Options{MaxLagBlocks: 3})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, endpoints.Placeholder, strings.NewReader("{}"))
	resp, err := (&http.Client{Transport: p.Transport(true)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(endpointCollector(map[payment.Network]*endpoints.Pool{payment.Tron: p}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	var all strings.Builder
	for _, mf := range mfs {
		all.WriteString(mf.String())
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.GetGauge() != nil:
				got[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				got[key] = m.GetCounter().GetValue()
			}
		}
	}
	for key, want := range map[string]float64{
		"paywatch_endpoint_calls_total,endpoint=trongrid,network=tron":             1,
		"paywatch_endpoint_budget_used_ratio,endpoint=trongrid,network=tron":       0.01,
		"paywatch_endpoints_serving,network=tron":                                  1,
		"paywatch_endpoint_state,endpoint=trongrid,network=tron,state=healthy":     1,
		"paywatch_endpoint_state,endpoint=trongrid,network=tron,state=unreachable": 0,
		"paywatch_endpoint_lag_blocks,endpoint=trongrid,network=tron":              0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (exported: %v), want %v", key, v, ok, want)
		}
	}
	for _, secret := range []string{"s3cret", "KEYPATH", strings.TrimPrefix(srv.URL, "http://")} {
		if strings.Contains(all.String(), secret) {
			t.Fatalf("a metric holds %q", secret)
		}
	}
}
