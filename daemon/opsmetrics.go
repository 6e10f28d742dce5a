package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/store"
)

// opsMetrics exports what the alert rules (deploy/prometheus) watch beyond
// the scanners: the database as this instance sees it, the webhook
// outboxes, the finance inbox, unrecovered reversals, open intents, the
// events recorded and the rate sources. Database figures are read at
// scrape time.
type opsMetrics struct {
	ctx       context.Context
	store     *store.Store
	book      *rates.Book
	symbols   []string
	sources   int // rate providers configured
	endpoints []string
	leader    *prometheus.GaugeVec
	events    *prometheus.CounterVec
	confirm   *prometheus.HistogramVec
	webhook   *prometheus.HistogramVec

	mu       sync.Mutex
	eventSeq int64
	counting bool

	dbUp, dbRO, dbLosses                 *prometheus.Desc
	outboxPending, outboxAge             *prometheus.Desc
	inboxItems, inboxAge, unrecovered    *prometheus.Desc
	openIntents                          *prometheus.Desc
	rateOK, rateUsable, rateRej, rateAge *prometheus.Desc
}

func newOpsMetrics(ctx context.Context, reg *prometheus.Registry, st *store.Store, book *rates.Book, symbols []string, sources int, endpoints []string, networks []payment.Network) *opsMetrics {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	m := &opsMetrics{ctx: ctx, store: st, book: book, symbols: symbols, sources: sources, endpoints: endpoints,
		leader: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "paywatch_scanner_leader",
			Help: "1 while this instance leads the network's scanner (holds its lease)."}, []string{"network"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paywatch_events_total",
			Help: "Events recorded in the database since this instance started, by type (every instance counts every event: aggregate with max, not sum)."}, []string{"type"}),
		confirm: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "paywatch_confirmation_seconds",
			Help:    "Time from a payment's detection to its intent being paid, by network (observed from the intent.paid events recorded since this instance started).",
			Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}}, []string{"network"}),
		webhook: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "paywatch_webhook_delivery_seconds",
			Help:    "Time from an event being recorded to its webhook endpoint accepting it, by endpoint (deliveries by this instance).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800}}, []string{"endpoint"}),
		dbUp:          d("paywatch_database_up", "1 while a read-write PostgreSQL server answers this instance's probe."),
		dbRO:          d("paywatch_database_read_only", "1 while only a read-only server (a standby not yet promoted) answers."),
		dbLosses:      d("paywatch_database_losses_total", "Times this instance declared its database server lost and closed every connection."),
		outboxPending: d("paywatch_webhook_outbox_pending", "Events not yet delivered to the webhook endpoint (capped at 100000).", "endpoint"),
		outboxAge:     d("paywatch_webhook_outbox_oldest_age_seconds", "Age of the oldest event not yet delivered to the endpoint (0: none).", "endpoint"),
		inboxItems:    d("paywatch_inbox_unresolved", "Transfers waiting for a finance decision (the inbox)."),
		inboxAge:      d("paywatch_inbox_oldest_age_seconds", "Age of the oldest transfer waiting for a finance decision (0: none)."),
		unrecovered:   d("paywatch_unrecovered_cents", "USD cents that reversals could not take back from balances (a balance was short) and no recovery has taken since."),
		openIntents:   d("paywatch_intents_open", "Intents awaiting payment or detected, by status.", "status"),
		rateOK:        d("paywatch_rate_available", "1 when a quote for the symbol can be made (enough fresh, agreeing sources).", "symbol"),
		rateUsable:    d("paywatch_rate_sources_usable", "Sources whose price for the symbol is fresh and agrees.", "symbol"),
		rateRej:       d("paywatch_rate_sources_rejected", "Sources whose price for the symbol is missing, stale, an outlier or disagreeing.", "symbol"),
		rateAge:       d("paywatch_rate_age_seconds", "Age of the oldest price in the symbol's quote (absent without a quote).", "symbol"),
	}
	for _, n := range networks {
		m.leader.WithLabelValues(string(n)).Set(0)
	}
	for _, t := range payment.EventTypes() {
		m.events.WithLabelValues(string(t))
	}
	for _, n := range networks {
		m.confirm.WithLabelValues(string(n))
	}
	for _, e := range endpoints {
		m.webhook.WithLabelValues(e)
	}
	reg.MustRegister(m.leader, m.events, m.confirm, m.webhook, m)
	return m
}

// Describe implements prometheus.Collector.
func (m *opsMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.dbUp, m.dbRO, m.dbLosses, m.outboxPending, m.outboxAge, m.inboxItems, m.inboxAge,
		m.unrecovered, m.openIntents, m.rateOK, m.rateUsable, m.rateRej, m.rateAge} {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Collect implements prometheus.Collector.
func (m *opsMetrics) Collect(ch chan<- prometheus.Metric) {
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	now := time.Now()
	g(m.dbUp, b2f(m.store.Up()))
	g(m.dbRO, b2f(m.store.ReadOnly()))
	ch <- prometheus.MustNewConstMetric(m.dbLosses, prometheus.CounterValue, float64(m.store.Losses()))
	for _, sym := range m.symbols {
		q, err := m.book.Quote(sym, now)
		usable, rejected := len(q.Sources), 0
		var ue *rates.UnavailableError
		if errors.As(err, &ue) {
			usable, rejected = ue.Usable, len(ue.Rejected)
		} else if err == nil {
			rejected = m.sources - usable
		}
		g(m.rateOK, b2f(err == nil), sym)
		g(m.rateUsable, float64(usable), sym)
		g(m.rateRej, float64(rejected), sym)
		if err == nil {
			g(m.rateAge, now.Sub(q.At).Seconds(), sym)
		}
	}
	if !m.store.Up() {
		return // nothing to read; paywatch_database_up says why
	}
	ctx, cancel := context.WithTimeout(m.ctx, 5*time.Second)
	defer cancel()
	age := func(at *time.Time) float64 {
		if at == nil {
			return 0
		}
		return max(0, now.Sub(*at).Seconds())
	}
	if ops, err := m.store.Operations(ctx, m.endpoints); err == nil {
		for _, o := range ops.Outboxes {
			g(m.outboxPending, float64(o.Pending), o.Endpoint)
			g(m.outboxAge, age(o.OldestAt), o.Endpoint)
		}
		if len(m.endpoints) == 0 {
			// No endpoint: zero, present, so an alert or a panel tells
			// "none configured" from "not exported" (endpoint="").
			g(m.outboxPending, 0, "")
			g(m.outboxAge, 0, "")
		}
		g(m.inboxItems, float64(ops.InboxUnresolved))
		g(m.inboxAge, age(ops.InboxOldestAt))
		g(m.unrecovered, float64(ops.UnrecoveredCents))
		for st, n := range ops.OpenIntents {
			g(m.openIntents, float64(n), st)
		}
	}
	m.countEvents(ctx)
}

// countEvents adds the events recorded since the last scrape to
// paywatch_events_total (the first scrape only notes where to start).
func (m *opsMetrics) countEvents(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.counting {
		seq, err := m.store.LastEventSeq(ctx)
		if err != nil {
			return
		}
		m.eventSeq, m.counting = seq, true
		return
	}
	counts, last, err := m.store.EventCountsAfter(ctx, m.eventSeq)
	if err != nil {
		return
	}
	for typ, n := range counts {
		m.events.WithLabelValues(typ).Add(float64(n))
	}
	if counts[string(payment.IntentEvent(payment.IntentPaid))] > 0 {
		if cs, err := m.store.ConfirmationsBetween(ctx, m.eventSeq, last); err == nil {
			for _, c := range cs {
				m.confirm.WithLabelValues(c.Network).Observe(max(0, c.Seconds))
			}
		}
	}
	m.eventSeq = last
}

// delivered implements webhooks.Options.Delivered.
func (m *opsMetrics) delivered(endpoint string, after time.Duration) {
	m.webhook.WithLabelValues(endpoint).Observe(max(0, after.Seconds()))
}

// leading records whether this instance leads network n's scanner.
func (m *opsMetrics) leading(n payment.Network, yes bool) {
	if m == nil {
		return
	}
	m.leader.WithLabelValues(string(n)).Set(b2f(yes))
}
