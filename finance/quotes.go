package finance

import (
	"context"
	"time"

	"github.com/paywatch/paywatch/store"
)

// RecordQuotes keeps the rate book's quote of each symbol in the database
// (store.RecordQuote) now and every Bounds.Window/5 of its Clock until ctx ends, so that
// a credit_account decided later is checked against the quote of its
// transfer's time. A symbol without a quote at a tick is skipped; a failed
// write is logged and retried at the next tick.
func (s *Service) RecordQuotes(ctx context.Context, symbols []string) error {
	if s.quotes == nil {
		return nil
	}
	every := max(s.bounds.Window/5, time.Second)
	for {
		s.recordQuotes(ctx, symbols)
		wait := s.clock.NewTimer(every)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil
		case <-wait.C:
		}
	}
}

func (s *Service) recordQuotes(ctx context.Context, symbols []string) {
	now := s.now()
	for _, sym := range symbols {
		q, err := s.quotes.Quote(sym, now)
		if err != nil {
			continue
		}
		err = s.store.RecordQuote(ctx, store.RateQuote{Symbol: sym, At: q.At, USDPerUnit: q.Decimal(), Sources: q.Sources})
		if err != nil && ctx.Err() == nil {
			s.log.Warn("recording a rate quote failed", "symbol", sym, "err", err)
		}
	}
}
