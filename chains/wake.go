package chains

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
)

// ErrNotifyUnsupported is returned by Notifier.Notify when the node offers
// no notifications (btcd has no waitfornewblock, an HTTP-only provider has
// no websocket): the scanner polls, as it always does.
var ErrNotifyUnsupported = errors.New("node offers no change notifications")

// NotifyConfig paces resubscribing after a lost subscription.
type NotifyConfig struct {
	// MinBackoff is the first retry delay (default 1 s).
	MinBackoff time.Duration
	// MaxBackoff caps the retry delay (default 1 min).
	MaxBackoff time.Duration
	// Clock times the retries; nil is the wall clock.
	Clock clock.Clock
}

// stableFor is how long a subscription must have lived for its loss to
// restart the backoff from MinBackoff.
const stableFor = time.Minute

// KeepNotified keeps n subscribed until ctx ends, waking on every
// notification; a lost subscription wakes once (something may have happened
// meanwhile) and is retried with jittered backoff while polling goes on.
// Cancellation is a clean exit.
func KeepNotified(ctx context.Context, n Notifier, wake func(), cfg NotifyConfig, log *slog.Logger) error {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	log = logs.Or(log)
	clk := clock.Or(cfg.Clock)
	retry := clock.Backoff{Min: min(cfg.MinBackoff, cfg.MaxBackoff), Max: cfg.MaxBackoff, Factor: 2, Jitter: 0.5}
	failures := 0
	for {
		began := clk.Now()
		err := n.Notify(ctx, wake)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrNotifyUnsupported) {
			log.Info("node offers no notifications; polling only", "reason", RedactError(err))
			return nil
		}
		if clk.Now().Sub(began) > stableFor {
			failures = 0
		}
		failures++
		log.Warn("node notifications lost; polling until they are back", "err", RedactError(err), "attempt", failures)
		wake()
		select {
		case <-ctx.Done():
			return nil
		case <-clk.After(retry.Delay(failures)):
		}
	}
}
