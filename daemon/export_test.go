package daemon

import "context"

// WebhookSenders are the webhook senders Run runs, for tests.
func (d *Daemon) WebhookSenders() []func(ctx context.Context) error { return d.webhookSenders() }
