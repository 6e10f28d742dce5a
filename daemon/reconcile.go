package daemon

import (
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reconcile"
)

// ReconcileConfig is config.Reconcile as the package takes it.
func ReconcileConfig(rc config.Reconcile) reconcile.Config {
	return reconcile.Config{Schedule: rc.CronSchedule(), Blocks: rc.Blocks, MaxBlocks: rc.MaxBlocks, Sample: rc.SampleAddresses,
		RatePerSecond: rc.RatePerSecond}
}

// ReconcileViews is each network's view for the reconciler: the Solana
// client's signature listings, every other network's blocks read again
// through its source with the watched set.
func ReconcileViews(sources map[payment.Network]chains.Source, watch map[payment.Network]*chains.WatchSet) map[payment.Network]reconcile.View {
	views := map[payment.Network]reconcile.View{}
	for n, src := range sources {
		if ms, ok := src.(*solana.ModeSource); ok {
			views[n] = &reconcile.SignatureView{Client: ms.Client}
			continue
		}
		// An estimate for the view's own count (docs/operating.md's figures are
		// counted at the node): Tron getblockbynum (and the infos when a
		// contract ran), Ethereum the block (and logs or receipts when a
		// watched token moved), Bitcoin and Litecoin getblockhash + getblock.
		per := int64(1)
		if n == payment.Bitcoin || n == payment.Litecoin {
			per = 2
		}
		views[n] = &reconcile.BlockView{Source: src, Watched: watch[n], CallsPerBlock: per}
	}
	return views
}

// wireReconciler builds the daemon's reconciler over its sources and
// watched sets, and exports its findings as a metric.
func (d *Daemon) wireReconciler() error {
	rc := ReconcileConfig(d.cfg.Reconcile)
	rc.Clock = d.clock
	// Only the scanner's leader fills a network's watched set: the
	// reconciler checks the networks this instance leads (issue 32 item 6).
	rc.Leads = d.Leads
	r, err := reconcile.New(d.store, rc, ReconcileViews(d.sources, d.watch), d.log)
	if err != nil {
		return err
	}
	d.reconciler = r
	d.reg.MustRegister(reconcile.NewCollector(d.store))
	return nil
}
