package chains

import (
	"context"
	"fmt"
)

// apply hands consecutive blocks to the sinks, in one transaction when
// there is a BatchSink.
func (s *Scanner) apply(ctx context.Context, blocks []Block, tips Tips) error {
	if len(blocks) == 0 {
		return nil
	}
	if s.sinks.Batch != nil && len(blocks) > 1 {
		if err := s.sinks.Batch.ApplyBlocks(ctx, s.cfg.Network, blocks, tips); err != nil {
			return fmt.Errorf("apply blocks %d-%d: %w", blocks[0].Height, blocks[len(blocks)-1].Height, err)
		}
		return nil
	}
	for _, b := range blocks {
		if err := s.sinks.Chain.ApplyBlock(ctx, s.cfg.Network, b, tips); err != nil {
			return fmt.Errorf("apply block %d: %w", b.Height, err)
		}
	}
	return nil
}

// prefetch is a catch-up window being fetched ahead of its step.
type prefetch struct {
	from, to Height
	watched  int // the watch set's size when the fetch started
	done     chan []fetched
	cancel   context.CancelFunc
}

func (s *Scanner) watchedLen() int {
	if s.watched == nil {
		return 0
	}
	return s.watched.Len()
}

// prefetch starts fetching the window from..to in the background, so that
// the next step finds it ready while this one applies its blocks.
func (s *Scanner) prefetch(ctx context.Context, from, to Height) {
	s.dropAhead()
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetch{from: from, to: to, watched: s.watchedLen(), done: make(chan []fetched, 1), cancel: cancel}
	go func() {
		defer cancel()
		p.done <- s.fetch(ctx, from, to)
	}()
	s.ahead = p
}

func (s *Scanner) dropAhead() {
	if s.ahead != nil {
		s.ahead.cancel()
		s.ahead = nil
	}
}

// fetchAhead returns the window from..to: the prefetched one when it is
// that window, complete, and matched against the current watch set (keys
// added since could have been missed), else fetched now. A prefetched block
// is checked like any other: a stale one fails the parent-hash check.
func (s *Scanner) fetchAhead(ctx context.Context, from, to Height) []fetched {
	p := s.ahead
	s.ahead = nil
	if p != nil {
		if p.from == from && p.to == to && p.watched == s.watchedLen() {
			select {
			case results := <-p.done:
				ok := true
				for _, r := range results {
					ok = ok && r.err == nil
				}
				if ok {
					return results
				}
			case <-ctx.Done():
			}
		}
		p.cancel()
	}
	return s.fetch(ctx, from, to)
}
