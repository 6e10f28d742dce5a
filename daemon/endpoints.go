package daemon

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// endpointsRecordEvery is how often an instance records its endpoints for
// `paywatch status`.
const endpointsRecordEvery = 5 * time.Second

// recordEndpoints records this instance's view of every pool's endpoints
// in the database every endpointsRecordEvery (on the daemon's clock), for
// `paywatch status`, until ctx ends. A failed write is logged: the next
// one replaces it.
func (d *Daemon) recordEndpoints(ctx context.Context) error {
	for {
		now := d.clock.Now()
		for n, p := range d.pools {
			var rows []store.EndpointRow
			for _, s := range p.Status() {
				rows = append(rows, store.EndpointRow{Name: s.Name, State: string(s.State), Head: s.Head, Lag: s.Lag,
					LatencyMillis: s.LatencyMillis, Throttles: s.Throttles, Errors: s.Errors, CallsPerMinute: s.CallsPerMinute,
					BudgetUsed: s.BudgetUsed, DailyBudget: s.DailyBudget})
			}
			if err := d.store.RecordEndpoints(ctx, string(n), d.cfg.Instance, rows, now); err != nil && ctx.Err() == nil {
				d.log.Warn("recording node endpoints failed", "network", n, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.clock.After(endpointsRecordEvery):
		}
	}
}

// endpointStatus is network n's endpoints as this instance's pool sees
// them (nil for a network of one rpc_url).
func (d *Daemon) endpointStatus(n payment.Network) []endpoints.Status {
	if p := d.pools[n]; p != nil {
		return p.Status()
	}
	return nil
}

// endpointStates are the states paywatch_endpoint_state is exported for.
var endpointStates = []endpoints.State{endpoints.Healthy, endpoints.Lagging, endpoints.Throttled, endpoints.Unreachable,
	endpoints.WrongChain, endpoints.OverBudget}

// endpointMetrics exports each endpoint of each pool, labelled by network
// and endpoint name (never its URL).
type endpointMetrics struct {
	pools                                                          map[payment.Network]*endpoints.Pool
	state, serving, lag, latency, throttles, errors, calls, budget *prometheus.Desc
	verifications                                                  *prometheus.Desc
}

func endpointCollector(pools map[payment.Network]*endpoints.Pool) *endpointMetrics {
	l := []string{"network", "endpoint"}
	return &endpointMetrics{pools: pools,
		state:     prometheus.NewDesc("paywatch_endpoint_state", "1 for the node endpoint's current state (healthy, lagging, throttled, unreachable, wrong_chain, over_budget), 0 for the others.", append(l, "state"), nil),
		serving:   prometheus.NewDesc("paywatch_endpoints_serving", "Scanning endpoints of the network that can serve within max_lag_blocks (healthy or throttled); 0 refuses new intents.", []string{"network"}, nil),
		lag:       prometheus.NewDesc("paywatch_endpoint_lag_blocks", "Blocks the endpoint's head is behind the best head any endpoint of the network proved.", l, nil),
		latency:   prometheus.NewDesc("paywatch_endpoint_latency_seconds", "Recent answer time of the endpoint (a moving average).", l, nil),
		throttles: prometheus.NewDesc("paywatch_endpoint_throttles_total", "Rate-limit answers of the endpoint (429, or 403/503 with a rate-limit body).", l, nil),
		errors:    prometheus.NewDesc("paywatch_endpoint_errors_total", "Connection errors and gateway failures of the endpoint.", l, nil),
		calls:     prometheus.NewDesc("paywatch_endpoint_calls_total", "Requests sent to the endpoint.", l, nil),
		budget:    prometheus.NewDesc("paywatch_endpoint_budget_used_ratio", "Share of the endpoint's daily_budget spent today (endpoints with a budget).", l, nil),
		verifications: prometheus.NewDesc("paywatch_endpoint_verifications_total",
			"Large payments the endpoint, as the second source, confirmed (result agrees) or showed otherwise than the scan (disagrees), found by this instance.",
			append(l, "result"), nil),
	}
}

func (m *endpointMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.state, m.serving, m.lag, m.latency, m.throttles, m.errors, m.calls, m.budget, m.verifications} {
		ch <- d
	}
}

func (m *endpointMetrics) Collect(ch chan<- prometheus.Metric) {
	for n, p := range m.pools {
		serving := 0
		for _, s := range p.Status() {
			net, name := string(n), s.Name
			if s.Scans && (s.State == endpoints.Healthy || s.State == endpoints.Throttled) {
				serving++
			}
			for _, st := range endpointStates {
				v := 0.0
				if s.State == st {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(m.state, prometheus.GaugeValue, v, net, name, string(st))
			}
			ch <- prometheus.MustNewConstMetric(m.lag, prometheus.GaugeValue, float64(s.Lag), net, name)
			ch <- prometheus.MustNewConstMetric(m.latency, prometheus.GaugeValue, float64(s.LatencyMillis)/1000, net, name)
			ch <- prometheus.MustNewConstMetric(m.throttles, prometheus.CounterValue, float64(s.Throttles), net, name)
			ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(s.Errors), net, name)
			ch <- prometheus.MustNewConstMetric(m.calls, prometheus.CounterValue, float64(s.Calls), net, name)
			if s.DailyBudget > 0 {
				ch <- prometheus.MustNewConstMetric(m.budget, prometheus.GaugeValue, s.BudgetShare, net, name)
			}
			ch <- prometheus.MustNewConstMetric(m.verifications, prometheus.CounterValue, float64(s.Verifications), net, name, "agrees")
			ch <- prometheus.MustNewConstMetric(m.verifications, prometheus.CounterValue, float64(s.Disagreements), net, name, "disagrees")
		}
		ch <- prometheus.MustNewConstMetric(m.serving, prometheus.GaugeValue, float64(serving), string(n))
	}
}
