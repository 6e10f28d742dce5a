package intents

import (
	"context"
	"time"
)

// Schedule says when a recurring job runs next (a cron.Schedule is one).
type Schedule interface {
	Next(time.Time) time.Time
}

// RunSweeps runs Sweep at every time of sched, by the service's Clock,
// until ctx ends. A failed
// sweep is logged and tried again at the next time: a deadline is enforced
// late, never skipped, since Sweep takes every open intent past its
// deadline.
func (s *Service) RunSweeps(ctx context.Context, sched Schedule) error {
	for {
		now := s.opt.Clock.Now()
		wait := s.opt.Clock.NewTimer(max(sched.Next(now).Sub(now), 0))
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil
		case <-wait.C:
		}
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("deadline sweep failed", "err", err)
		} else if n > 0 {
			s.log.Info("deadline sweep", "intents", n)
		}
	}
}
