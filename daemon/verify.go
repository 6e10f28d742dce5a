package daemon

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/verify"
)

// wireVerifier builds the second source for large payments (issue 33 item
// 5) over the networks that set large_amount_usd, logs the warning of
// each that has no endpoint to verify with, and exports its metrics. It
// runs after the intents service exists.
func (d *Daemon) wireVerifier() {
	for _, w := range d.cfg.VerifyWarnings() {
		d.log.Warn(w)
	}
	nets := map[payment.Network]verify.Network{}
	for n, src := range d.sources {
		large, ok := d.cfg.Networks[n].LargeAmount()
		if !ok {
			continue
		}
		nw := verify.Network{Source: src, MinCents: int64(large)}
		if p := d.pools[n]; p != nil {
			nw.Pool = p
		}
		nets[n] = nw
	}
	if len(nets) == 0 {
		return
	}
	d.verifier = verify.New(d.store, d.svc, verify.Config{Networks: nets, Leads: d.Leads, Clock: d.clock, Log: d.log})
	d.reg.MustRegister(&verifyMetrics{d: d,
		held: prometheus.NewDesc("paywatch_verification_held_intents",
			"Intents from networks.<n>.large_amount_usd whose confirmed payment a second source has not verified, by the verification's state "+
				"(pending: the verifier cannot say yet; unseen, disagrees: it shows otherwise; no_verifier: none is configured). Held: never paid while so.",
			[]string{"network", "state"}, nil),
		disagreements: prometheus.NewDesc("paywatch_verification_disagreements_total",
			"Transfers of large intents a second source showed otherwise (another amount or asset, or not at all) than the scan, found by this instance.",
			[]string{"network"}, nil)})
}

// heldLimit bounds the held intents read for the metric.
const heldLimit = 1000

// verificationStatus adds this instance's view of network n's second
// source to its status: the endpoints of role verify and the
// disagreements its verifier found.
func (d *Daemon) verificationStatus(n payment.Network, st *availability.VerificationStatus) {
	if p := d.pools[n]; p != nil {
		for _, s := range p.Status() {
			if !s.Scans {
				st.Verifiers = append(st.Verifiers, s.Name)
			}
		}
	}
	if d.verifier != nil {
		st.Disagreements = d.verifier.Disagreements(n)
	}
}

// verifyMetrics exports the held intents (read from the store at each
// scrape) and this instance's disagreements.
type verifyMetrics struct {
	d                   *Daemon
	held, disagreements *prometheus.Desc
}

func (m *verifyMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.held
	ch <- m.disagreements
}

var heldStates = []string{"", store.VerifyPending, store.VerifyUnseen, store.VerifyDisagrees, store.VerifyNoVerifier}

func (m *verifyMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range m.d.verifier.Networks() {
		ch <- prometheus.MustNewConstMetric(m.disagreements, prometheus.CounterValue, float64(m.d.verifier.Disagreements(n)), string(n))
		large, _ := m.d.cfg.Networks[n].LargeAmount()
		held, err := m.d.store.HeldByVerification(ctx, string(n), int64(large), heldLimit)
		if err != nil {
			m.d.log.Warn("reading held intents for the metrics failed", "network", n, "err", err)
			continue
		}
		by := map[string]int{}
		for _, h := range held {
			by[h.State]++
		}
		for _, s := range heldStates {
			label := s
			if label == "" {
				label = "unchecked"
			}
			ch <- prometheus.MustNewConstMetric(m.held, prometheus.GaugeValue, float64(by[s]), string(n), label)
		}
	}
}
