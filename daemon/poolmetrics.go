package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/store"
)

// poolCollector exports each network's address supply (issue 22, item 5):
// paywatch_address_pool_free and paywatch_derivation_gap. The figures are
// read at most once per cacheFor, whatever the scrape rate.
type poolCollector struct {
	store    *store.Store
	log      *slog.Logger
	cacheFor time.Duration
	free     *prometheus.Desc
	gap      *prometheus.Desc

	mu    sync.Mutex
	at    time.Time
	stats []store.PoolStat
}

func newPoolCollector(st *store.Store, log *slog.Logger) *poolCollector {
	return &poolCollector{store: st, log: log, cacheFor: 15 * time.Second,
		free: prometheus.NewDesc("paywatch_address_pool_free",
			"Addresses ready to hand out (a Solana pool's imported ones, a derived network's look-ahead); 0 means creations answer 503.",
			[]string{"network"}, nil),
		gap: prometheus.NewDesc("paywatch_derivation_gap",
			"Derived addresses handed out after the last one that received a payment; alert well below the wallet's gap limit (20 for BIP-44).",
			[]string{"network"}, nil)}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.free; ch <- c.gap }

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if time.Since(c.at) >= c.cacheFor {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stats, err := c.store.AddressPoolStats(ctx)
		cancel()
		if err != nil {
			c.log.Warn("reading the address pool figures failed", "err", err)
		} else {
			c.stats, c.at = stats, time.Now()
		}
	}
	stats := c.stats
	c.mu.Unlock()
	for _, s := range stats {
		ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(s.Free), s.Network)
		ch <- prometheus.MustNewConstMetric(c.gap, prometheus.GaugeValue, float64(s.Gap), s.Network)
	}
}
