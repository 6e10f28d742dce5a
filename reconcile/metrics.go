package reconcile

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Collector exports the reconciler's state for alerting, read from the
// store at each scrape: paywatch_reconcile_findings (live findings by
// network, kind and status: alert on status="open"),
// paywatch_reconcile_last_run_timestamp_seconds and
// paywatch_reconcile_last_run_node_calls per network.
type Collector struct {
	st                    *store.Store
	findings, last, calls *prometheus.Desc
}

// NewCollector returns the collector over st.
func NewCollector(st *store.Store) *Collector {
	return &Collector{st: st,
		findings: prometheus.NewDesc("paywatch_reconcile_findings",
			"Reconciler findings not resolved: differences between the node's view of our addresses and what paywatch recorded.",
			[]string{"network", "kind", "status"}, nil),
		last: prometheus.NewDesc("paywatch_reconcile_last_run_timestamp_seconds",
			"When the reconciler's last run of the network finished.", []string{"network"}, nil),
		calls: prometheus.NewDesc("paywatch_reconcile_last_run_node_calls",
			"Node calls the reconciler's last run of the network made.", []string{"network"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.findings
	ch <- c.last
	ch <- c.calls
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.st.LiveFindingCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.findings, err)
		return
	}
	// Open findings are exported for every network and kind, zero when
	// there are none, so the alert on status="open" reads a present series.
	for _, n := range payment.Networks {
		for _, kind := range []string{store.FindingMissing, store.FindingUnexpected, store.FindingMismatch, store.FindingNodeError} {
			k := [3]string{string(n), kind, store.FindingOpen}
			if _, ok := counts[k]; !ok {
				ch <- prometheus.MustNewConstMetric(c.findings, prometheus.GaugeValue, 0, k[0], k[1], k[2])
			}
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.findings, prometheus.GaugeValue, float64(n), k[0], k[1], k[2])
	}
	runs, err := c.st.ReconcileRuns(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.last, err)
		return
	}
	for _, r := range runs {
		if r.LastFinishedAt != nil {
			ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, float64(r.LastFinishedAt.Unix()), r.Network)
			ch <- prometheus.MustNewConstMetric(c.calls, prometheus.GaugeValue, float64(r.LastCalls), r.Network)
		}
	}
}
