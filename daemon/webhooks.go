package daemon

import (
	"context"
	"time"

	"github.com/paywatch/paywatch/webhooks"
)

// webhookSenders returns one webhook sender per configured endpoint; a
// configuration the senders refuse (a missing secret) is one service that
// fails at once, so Run stops with the reason.
func (d *Daemon) webhookSenders() []func(ctx context.Context) error {
	eps, err := webhooks.FromConfig(d.cfg.Webhooks, d.getenv)
	if err != nil {
		return []func(ctx context.Context) error{func(context.Context) error { return err }}
	}
	var out []func(ctx context.Context) error
	var delivered func(string, time.Duration)
	if d.ops != nil {
		delivered = d.ops.delivered
	}
	for _, ep := range eps {
		s := webhooks.New(ep, webhooks.Options{Store: d.store, Log: d.log, Delivered: delivered})
		out = append(out, s.Run)
	}
	return out
}
