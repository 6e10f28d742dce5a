package finance

import (
	"context"
	"log/slog"
	"math/big"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/store"
)

// Redecider decides intents again once a finance decision changed what their
// transfers mean; *intents.Service is one.
type Redecider interface {
	// RedecideAll decides the payables of the given intents again in tx,
	// each once, locking each payable then its intents.
	RedecideAll(ctx context.Context, tx *store.Tx, ids []string, now time.Time) error
	// RedecidePayable decides every intent of a payable again in tx after
	// the payable was paid by other means.
	RedecidePayable(ctx context.Context, tx *store.Tx, payableID int64, now time.Time) error
}

var _ Redecider = (*intents.Service)(nil)

// Quoter answers the current quote of a symbol.
type Quoter interface {
	Quote(symbol string, now time.Time) (rates.Quote, error)
}

// Options wires a Service.
type Options struct {
	Store *store.Store
	// Redecider decides the intents a resolution or a debit touches.
	Redecider Redecider
	// Quotes values a credit_account of a transfer that has no locked rate
	// and no usd_per_unit; nil refuses it (rate_unavailable).
	Quotes Quoter
	// Clock is the clock of decisions and of the quote recorder; nil is
	// the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
	// Bounds bound the rates of credit_account; zero values take the
	// defaults (BoundsOf a default config).
	Bounds Bounds
}

// Bounds bound the rate a credit_account may use (issue 22): within
// MaxDeviation (a fraction) of the rate book's quote at the transfer's
// time, a quote recorded within Window of it; a rate outside needs an
// override and credits at most MaxOverride cents.
type Bounds struct {
	MaxDeviation *big.Rat
	Window       time.Duration
	MaxOverride  int64
}

// BoundsOf reads the bounds from the config: rates.max_deviation,
// rates.max_age and finance.max_override_credit_usd.
func BoundsOf(cfg *config.Config) Bounds {
	return Bounds{MaxDeviation: cfg.Rates.MaxDeviationFraction(), Window: cfg.Rates.MaxAge.Duration,
		MaxOverride: int64(cfg.Finance.MaxOverrideCredit())}
}

// Service is finance's desk: the inbox, resolutions, balances, the ledger
// and debits.
type Service struct {
	store   *store.Store
	decider Redecider
	quotes  Quoter
	clock   clock.Clock
	now     func() time.Time
	log     *slog.Logger
	bounds  Bounds
}

// New returns a Service.
func New(opt Options) *Service {
	opt.Clock = clock.Or(opt.Clock)
	opt.Log = logs.Or(opt.Log)
	def := BoundsOf(config.Default())
	if opt.Bounds.MaxDeviation == nil || opt.Bounds.MaxDeviation.Sign() <= 0 {
		opt.Bounds.MaxDeviation = def.MaxDeviation
	}
	if opt.Bounds.Window <= 0 {
		opt.Bounds.Window = def.Window
	}
	return &Service{clock: opt.Clock, store: opt.Store, decider: opt.Redecider, quotes: opt.Quotes, now: clock.Stored(opt.Clock.Now),
		log: opt.Log.With("component", "finance"), bounds: opt.Bounds}
}
