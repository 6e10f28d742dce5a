package rates

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
	"github.com/robfig/cron/v3"
)

// BookConfig tunes a Book. Zero values take the defaults.
type BookConfig struct {
	// MaxAge is how old a price may be and still count as fresh. Default 5m.
	MaxAge time.Duration
	// MaxDeviation is the largest relative distance from the median of all
	// fresh prices that a price may have; a price further away is an outlier
	// and dropped. Default 2/100. A price exactly at the bound is kept. Two
	// prices left must also agree within MaxDeviation of the higher, so that
	// neither moves the quote (their mean) by the full deviation.
	MaxDeviation *big.Rat
	// MinSources is how many fresh, non-outlier, agreeing prices a quote
	// needs. Default 2: one source alone sets no price unless the setup says
	// so (MinSources 1).
	MinSources int
	// CallTimeout bounds each (provider, symbol) fetch in Refresh. Default
	// 10s.
	CallTimeout time.Duration
	// Clock stamps prices that carry no time and times scheduled
	// refreshes; nil is the wall clock.
	Clock clock.Clock
}

// Defaults of BookConfig.
const (
	DefaultMaxAge      = 5 * time.Minute
	DefaultMinSources  = 2
	DefaultCallTimeout = 10 * time.Second
)

// DefaultMaxDeviation is 2%, returned as a fresh value.
func DefaultMaxDeviation() *big.Rat { return big.NewRat(2, 100) }

func (c BookConfig) withDefaults() BookConfig {
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxDeviation == nil || c.MaxDeviation.Sign() <= 0 {
		c.MaxDeviation = DefaultMaxDeviation()
	} else {
		c.MaxDeviation = new(big.Rat).Set(c.MaxDeviation)
	}
	if c.MinSources <= 0 {
		c.MinSources = DefaultMinSources
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	c.Clock = clock.Or(c.Clock)
	return c
}

// Book keeps the latest good price from each provider for each symbol and
// answers quotes from them. It is safe for concurrent use.
type Book struct {
	cfg       BookConfig
	providers []Provider
	symbols   []string
	log       *slog.Logger

	mu sync.RWMutex
	// slots[symbol][i] is provider i's state for symbol.
	slots map[string][]slot
}

// slot is one (provider, symbol) state: the last good price and the last
// failure since it.
type slot struct {
	price   *Price // last good price; nil until the first success
	lastErr error  // last failure; nil after a success
	errAt   time.Time
}

// NewBook returns a Book over providers for symbols. It fetches nothing until
// Refresh or Run. Invalid config values (zero or negative) take the
// defaults; a nil logger discards.
func NewBook(cfg BookConfig, providers []Provider, symbols []string, log *slog.Logger) *Book {
	log = logs.Or(log)
	b := &Book{
		cfg:       cfg.withDefaults(),
		providers: slices.Clone(providers),
		log:       log.With("component", "rates"),
		slots:     map[string][]slot{},
	}
	for _, s := range symbols {
		if _, dup := b.slots[s]; dup {
			continue
		}
		b.symbols = append(b.symbols, s)
		b.slots[s] = make([]slot, len(providers))
	}
	return b
}

// Refresh fetches every (provider, symbol) concurrently, each call bounded by
// CallTimeout. A success replaces the stored price; a failure is recorded as
// that pair's last error and keeps the last good price (whose age then
// decides whether it is still used). Refresh returns when every call has
// finished. Calls cut short because ctx itself ended are not recorded.
func (b *Book) Refresh(ctx context.Context) {
	var wg sync.WaitGroup
	for _, sym := range b.symbols {
		for i, p := range b.providers {
			wg.Go(func() { b.fetch(ctx, i, p, sym) })
		}
	}
	wg.Wait()
}

func (b *Book) fetch(ctx context.Context, i int, p Provider, sym string) {
	cctx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
	defer cancel()
	pr, err := p.Price(cctx, sym)
	if err == nil {
		err = checkPrice(pr)
	}
	if err != nil && ctx.Err() != nil {
		return // shutting down: not the provider's fault
	}
	now := b.cfg.Clock.Now()
	b.mu.Lock()
	s := &b.slots[sym][i]
	prevErr := s.lastErr
	if err != nil {
		s.lastErr, s.errAt = err, now
	} else {
		if pr.At.IsZero() {
			pr.At = now
		}
		pr.Source = p.Name()
		pr.USDPerUnit = new(big.Rat).Set(pr.USDPerUnit)
		s.price, s.lastErr, s.errAt = &pr, nil, time.Time{}
	}
	b.mu.Unlock()
	// A source failing the same way at every refresh (Binance and USDT, a
	// long outage) is logged at Warn once, then at Debug until it changes.
	switch {
	case err != nil && (prevErr == nil || prevErr.Error() != err.Error()):
		b.log.Warn("rate fetch failed", "provider", p.Name(), "symbol", sym, "err", err)
	case err != nil:
		b.log.Debug("rate fetch still failing", "provider", p.Name(), "symbol", sym, "err", err)
	case prevErr != nil:
		b.log.Info("rate fetch recovered", "provider", p.Name(), "symbol", sym, "usd_per_unit", decimalString(pr.USDPerUnit))
	default:
		b.log.Debug("rate fetched", "provider", p.Name(), "symbol", sym, "usd_per_unit", decimalString(pr.USDPerUnit))
	}
}

// checkPrice guards against providers outside this package breaking the
// Provider contract: a price must be present and positive.
func checkPrice(p Price) error {
	if p.USDPerUnit == nil || p.USDPerUnit.Sign() <= 0 {
		return fmt.Errorf("%w: provider returned a missing or non-positive price", ErrInvalidResponse)
	}
	return nil
}

// Run refreshes immediately, then on schedule (robfig/cron syntax: "@every
// 30s", "*/1 * * * *"), one refresh at a time, until ctx ends; it then
// returns nil. An unparsable schedule is returned as an error before any
// refresh.
func (b *Book) Run(ctx context.Context, schedule string) error {
	sched, err := cron.ParseStandard(schedule)
	if err != nil {
		return fmt.Errorf("rates: schedule %q: %w", schedule, err)
	}
	if err := b.RunOn(ctx, sched); err != nil {
		return fmt.Errorf("%w (schedule %q)", err, schedule)
	}
	return nil
}

// RunOn is Run on a parsed schedule (config's rates.refresh, parsed at
// load).
func (b *Book) RunOn(ctx context.Context, sched cron.Schedule) error {
	if sched == nil {
		return errors.New("rates: no refresh schedule")
	}
	b.Refresh(ctx)
	for {
		next := sched.Next(b.cfg.Clock.Now())
		if next.IsZero() { // e.g. "0 0 30 2 *": never fires
			return errors.New("rates: the schedule has no next run")
		}
		t := b.cfg.Clock.NewTimer(next.Sub(b.cfg.Clock.Now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
			b.Refresh(ctx)
		}
	}
}

// SourceReason says why one source was not used for a quote.
type SourceReason struct {
	// Source is the provider's Name.
	Source string
	// Reason is short and human-readable: "timeout", "stale 9m",
	// "outlier 3.10% from median 97000.12", "HTTP 500: ...".
	Reason string
}

// UnavailableError is the error of Book.Quote: it unwraps to ErrUnavailable
// and names every source that was not used and why.
type UnavailableError struct {
	// Symbol is the symbol quoted against USD.
	Symbol string
	// Sources is how many providers the Book has.
	Sources int
	// Usable is how many fresh, non-outlier prices there were.
	Usable int
	// Need is MinSources.
	Need int
	// Rejected lists the sources not used, in provider order.
	Rejected []SourceReason
}

// Error reads like `no fresh BTC/USD rate from 2 sources (coinbase: timeout;
// kraken: stale 9m)`.
func (e *UnavailableError) Error() string {
	var reasons []string
	for _, r := range e.Rejected {
		reasons = append(reasons, r.Source+": "+r.Reason)
	}
	detail := strings.Join(reasons, "; ")
	if e.Sources == 0 {
		detail = "no sources configured"
	}
	if e.Usable == 0 {
		return fmt.Sprintf("no fresh %s/USD rate from %d sources (%s)", e.Symbol, e.Sources, detail)
	}
	return fmt.Sprintf("only %d usable %s/USD rates from %d sources, need %d (%s)", e.Usable, e.Symbol, e.Sources, e.Need, detail)
}

// Unwrap returns ErrUnavailable.
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// Quote returns the median of the fresh, non-outlier prices for symbol at
// now. A price is fresh when now - At <= MaxAge. Outliers are judged against
// the median of all fresh prices; the quote is the median of those that
// remain, its Sources are their providers (in provider order) and its At the
// oldest of their times. With two fresh prices further apart than twice
// MaxDeviation, both are outliers and there is no quote: the Book does not
// guess which one is right. Any failure is an *UnavailableError (wrapping
// ErrUnavailable) naming each unused source and why.
func (b *Book) Quote(symbol string, now time.Time) (Quote, error) {
	b.mu.RLock()
	slots, ok := b.slots[symbol]
	if !ok {
		b.mu.RUnlock()
		return Quote{}, fmt.Errorf("%w: %s/USD is not tracked", ErrUnavailable, symbol)
	}
	type cand struct {
		idx   int
		price *Price
	}
	fresh := make([]cand, 0, len(slots))
	rejected := make([]SourceReason, len(slots)) // by provider index; "" = used
	for i, s := range slots {
		name := b.providers[i].Name()
		switch {
		case s.price != nil && now.Sub(s.price.At) <= b.cfg.MaxAge:
			fresh = append(fresh, cand{i, s.price})
		case s.lastErr != nil:
			r := describe(s.lastErr)
			if s.price != nil {
				r += ", last price " + age(now.Sub(s.price.At)) + " old"
			}
			rejected[i] = SourceReason{name, r}
		case s.price != nil:
			rejected[i] = SourceReason{name, "stale " + age(now.Sub(s.price.At))}
		default:
			rejected[i] = SourceReason{name, "no price yet"}
		}
	}
	b.mu.RUnlock()

	var used []cand
	if len(fresh) > 0 {
		vals := make([]*big.Rat, len(fresh))
		for i, c := range fresh {
			vals[i] = c.price.USDPerUnit
		}
		m := median(vals)
		limit := new(big.Rat).Mul(b.cfg.MaxDeviation, m)
		diff := new(big.Rat)
		for _, c := range fresh {
			diff.Sub(c.price.USDPerUnit, m)
			diff.Abs(diff)
			if diff.Cmp(limit) > 0 {
				dev := new(big.Rat).Quo(diff, m)
				dev.Mul(dev, big.NewRat(100, 1))
				rejected[c.idx] = SourceReason{b.providers[c.idx].Name(),
					fmt.Sprintf("outlier %s at %s%% from median %s", decimalString(c.price.USDPerUnit), dev.FloatString(2), decimalString(m))}
				continue
			}
			used = append(used, c)
		}
	}
	used = agreeing(used, b.cfg.MaxDeviation, func(c cand, m *big.Rat, spread string) {
		rejected[c.idx] = SourceReason{b.providers[c.idx].Name(),
			fmt.Sprintf("disagrees: %s, the two prices are %s%% apart around %s", decimalString(c.price.USDPerUnit), spread, decimalString(m))}
	}, func(c cand) *big.Rat { return c.price.USDPerUnit })
	if len(used) < b.cfg.MinSources || len(used) == 0 {
		e := &UnavailableError{Symbol: symbol, Sources: len(slots), Usable: len(used), Need: b.cfg.MinSources}
		for _, r := range rejected {
			if r.Source != "" {
				e.Rejected = append(e.Rejected, r)
			}
		}
		return Quote{}, e
	}
	q := Quote{Symbol: symbol, Sources: make([]string, len(used))}
	vals := make([]*big.Rat, len(used))
	for i, c := range used {
		vals[i] = c.price.USDPerUnit
		q.Sources[i] = c.price.Source
		if i == 0 || c.price.At.Before(q.At) {
			q.At = c.price.At
		}
	}
	q.USDPerUnit = new(big.Rat).Set(median(vals))
	return q, nil
}

// agreeing returns cs when it holds three or more prices (their median
// cannot be moved past another source by one of them) or two that agree:
// apart by at most maxDev of the higher, so that neither moves the quote
// (their mean) by more than half the deviation. Two that disagree are both
// dropped (drop is called for each): the Book does not guess which is right.
func agreeing[C any](cs []C, maxDev *big.Rat, drop func(c C, median *big.Rat, spread string), price func(C) *big.Rat) []C {
	if len(cs) != 2 {
		return cs
	}
	a, b := price(cs[0]), price(cs[1])
	hi := a
	if b.Cmp(a) > 0 {
		hi = b
	}
	diff := new(big.Rat).Abs(new(big.Rat).Sub(a, b))
	if diff.Cmp(new(big.Rat).Mul(maxDev, hi)) <= 0 {
		return cs
	}
	m := median([]*big.Rat{a, b})
	pct := new(big.Rat).Quo(diff, hi)
	pct.Mul(pct, big.NewRat(100, 1))
	for _, c := range cs {
		drop(c, m, pct.FloatString(2))
	}
	return nil
}

// median returns the middle value, or the mean of the two middle values, of
// vals (not modified). The result may alias an element of vals.
func median(vals []*big.Rat) *big.Rat {
	s := slices.Clone(vals)
	slices.SortFunc(s, func(a, b *big.Rat) int { return a.Cmp(b) })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	m := new(big.Rat).Add(s[n/2-1], s[n/2])
	return m.Quo(m, big.NewRat(2, 1))
}

// describe turns a fetch error into the short reason shown in quotes.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.reason()
	}
	var fe *fetchError
	if errors.As(err, &fe) {
		return fe.err.Error()
	}
	return err.Error()
}

// age formats a duration the way operators read it: "45s", "9m", "2h5m".
func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	default:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}

// Symbols returns the symbols the Book quotes, in the order given to NewBook.
func (b *Book) Symbols() []string { return slices.Clone(b.symbols) }
