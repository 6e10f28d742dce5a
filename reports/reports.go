package reports

import (
	"log/slog"
	"time"

	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/store"
)

// Options wires a Service.
type Options struct {
	Store *store.Store
	// Now is the clock that "as of now" and "has the period ended" read;
	// nil means time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Service builds reconciliations and closes reporting periods.
type Service struct {
	store *store.Store
	now   func() time.Time
	log   *slog.Logger
}

// New returns a Service.
func New(opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	opt.Log = logs.Or(opt.Log)
	return &Service{store: opt.Store, now: opt.Now, log: opt.Log.With("component", "reports")}
}
