package reports

import (
	"log/slog"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/store"
)

// Options wires a Service.
type Options struct {
	Store *store.Store
	// Clock is the clock that "as of now" and "has the period ended"
	// read; nil is the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
}

// Service builds reconciliations and closes reporting periods.
type Service struct {
	store *store.Store
	now   func() time.Time
	log   *slog.Logger
}

// New returns a Service.
func New(opt Options) *Service {
	opt.Clock = clock.Or(opt.Clock)
	opt.Log = logs.Or(opt.Log)
	return &Service{store: opt.Store, now: opt.Clock.Now, log: opt.Log.With("component", "reports")}
}
