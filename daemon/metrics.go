package daemon

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// scanMetrics exports scanner progress (read from the cursors at scrape
// time, so every instance reports the same truth) and step errors by kind.
type scanMetrics struct {
	// ctx bounds the reads of a scrape (Collect has no context of its
	// own): the daemon's, so a scrape during shutdown ends with it.
	ctx    context.Context
	nets   *availability.Networks
	errors *prometheus.CounterVec
	steps  *prometheus.CounterVec
	trs    *prometheus.CounterVec
	detect *prometheus.HistogramVec
	height *prometheus.Desc
	node   *prometheus.Desc
	lag    *prometheus.Desc
	health *prometheus.Desc
	watch  *prometheus.Desc
	// Operations (deploy/prometheus/paywatch-rules.yml).
	maxLag   *prometheus.Desc
	critical *prometheus.Desc
	reported *prometheus.Desc
	pool     *prometheus.Desc
	derived  *prometheus.Desc
}

func newScanMetrics(ctx context.Context, reg *prometheus.Registry, nets *availability.Networks) *scanMetrics {
	m := &scanMetrics{
		ctx:  ctx,
		nets: nets,
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paywatch_scan_errors_total",
			Help: "Scanner steps that failed, by network and kind (timeout, network, invalid_response, deep_reorg, other)."}, []string{"network", "kind"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paywatch_scan_steps_total",
			Help: "Scanner steps, by network."}, []string{"network"}),
		trs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paywatch_transfers_recorded_total",
			Help: "Transfers to our addresses recorded by this instance, by network and asset."}, []string{"network", "asset"}),
		detect: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "paywatch_detection_seconds",
			Help:    "Time from a block's timestamp to a transfer in it being recorded, by network (transfers first seen in a block; mempool sightings are recorded as they are seen).",
			Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600}}, []string{"network"}),
		height: prometheus.NewDesc("paywatch_scanned_height", "Height of the last scanned block.", []string{"network"}, nil),
		node:   prometheus.NewDesc("paywatch_node_height", "Height of the node's best block.", []string{"network"}, nil),
		lag:    prometheus.NewDesc("paywatch_lag_blocks", "Blocks between the node and the scanner.", []string{"network"}, nil),
		health: prometheus.NewDesc("paywatch_healthy", "1 when the network's scanner is healthy.", []string{"network"}, nil),
		watch:  prometheus.NewDesc("paywatch_addresses_watched", "Addresses watched on the network.", []string{"network"}, nil),
		maxLag: prometheus.NewDesc("paywatch_max_lag_blocks", "The network's max_lag_blocks: beyond it no intent is accepted.", []string{"network"}, nil),
		critical: prometheus.NewDesc("paywatch_network_critical", "1 while the network is in a sticky critical state (a reorg deeper than safety_depth, a finality violation, another chain) until an operator clears it.",
			[]string{"network"}, nil),
		reported: prometheus.NewDesc("paywatch_scanner_report_age_seconds", "Seconds since the network's scanner last recorded its state.", []string{"network"}, nil),
		pool:     prometheus.NewDesc("paywatch_address_pool_remaining", "Imported pool addresses not yet handed out (pool networks: Solana).", []string{"network"}, nil),
		derived:  prometheus.NewDesc("paywatch_derivation_next_index", "Next non-hardened derivation index (derived networks); it cannot pass 2147483647.", []string{"network"}, nil),
	}
	for _, n := range payment.Networks {
		if nc := nets.Config.Networks[n]; nc != nil && nc.Enabled {
			for _, kind := range []string{"timeout", "network", "invalid_response", "wrong_chain", "deep_reorg", "other"} {
				m.errors.WithLabelValues(string(n), kind)
			}
			m.steps.WithLabelValues(string(n))
			m.detect.WithLabelValues(string(n))
			for _, mi := range payment.Methods {
				if mi.Network == n {
					m.trs.WithLabelValues(string(n), string(mi.Asset))
				}
			}
		}
	}
	reg.MustRegister(m.errors, m.steps, m.trs, m.detect, m)
	return m
}

// TransferRecorded implements ingest.Counter.
func (m *scanMetrics) TransferRecorded(network, asset string) {
	m.trs.WithLabelValues(network, asset).Inc()
}

// TransferDetected implements ingest.DetectionObserver.
func (m *scanMetrics) TransferDetected(network string, after time.Duration) {
	m.detect.WithLabelValues(network).Observe(max(0, after.Seconds()))
}

// observe returns the scanner's step callback for network n.
func (m *scanMetrics) observe(n payment.Network) func(error) {
	return func(err error) {
		m.steps.WithLabelValues(string(n)).Inc()
		if err == nil {
			return
		}
		kind := "other"
		var ne net.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			kind = "timeout"
		case errors.As(err, &ne):
			kind = "network"
		case errors.Is(err, chains.ErrInvalidResponse):
			kind = "invalid_response"
		case errors.Is(err, chains.ErrWrongChain):
			kind = "wrong_chain"
		case errors.Is(err, chains.ErrDeepReorg):
			kind = "deep_reorg"
		}
		m.errors.WithLabelValues(string(n), kind).Inc()
	}
}

// Describe implements prometheus.Collector.
func (m *scanMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.height, m.node, m.lag, m.health, m.watch, m.maxLag, m.critical, m.reported, m.pool, m.derived} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *scanMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(m.ctx, 5*time.Second)
	defer cancel()
	nets, err := m.nets.Networks(ctx)
	if err != nil {
		return
	}
	for _, n := range nets {
		if !n.Enabled {
			continue
		}
		healthy := 0.0
		if n.Healthy {
			healthy = 1
		}
		ch <- prometheus.MustNewConstMetric(m.height, prometheus.GaugeValue, float64(n.ScannedHeight), n.Network)
		ch <- prometheus.MustNewConstMetric(m.node, prometheus.GaugeValue, float64(n.NodeHeight), n.Network)
		ch <- prometheus.MustNewConstMetric(m.lag, prometheus.GaugeValue, float64(n.LagBlocks), n.Network)
		ch <- prometheus.MustNewConstMetric(m.health, prometheus.GaugeValue, healthy, n.Network)
		ch <- prometheus.MustNewConstMetric(m.watch, prometheus.GaugeValue, float64(n.AddressesWatched), n.Network)
		if nc := m.nets.Config.Networks[payment.Network(n.Network)]; nc != nil {
			ch <- prometheus.MustNewConstMetric(m.maxLag, prometheus.GaugeValue, float64(nc.MaxLagBlocks), n.Network)
		}
		ch <- prometheus.MustNewConstMetric(m.critical, prometheus.GaugeValue, b2f(n.Critical != ""), n.Network)
		if n.UpdatedAt != nil {
			ch <- prometheus.MustNewConstMetric(m.reported, prometheus.GaugeValue, max(0, time.Since(*n.UpdatedAt).Seconds()), n.Network)
		}
		if n.PoolRemaining != nil {
			ch <- prometheus.MustNewConstMetric(m.pool, prometheus.GaugeValue, float64(*n.PoolRemaining), n.Network)
		}
		if n.DerivationNext != nil {
			ch <- prometheus.MustNewConstMetric(m.derived, prometheus.GaugeValue, float64(*n.DerivationNext), n.Network)
		}
	}
}
