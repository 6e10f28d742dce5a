package intents

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// roundSize is about how many addresses a round of the replenisher
// derives while creations keep coming: it tops the free addresses up to
// twice the gap once that many were taken, instead of once the gap was.
// A round of a whole gap (500 addresses in the benchmark) was tens of
// milliseconds of derivation and insert at once, which every creation
// running beside it waited for (most of the p99 latency of creations at
// 16 callers).
const roundSize = 64

// low is the number of free addresses (or of indexes derived above the one
// taken) under which a round tops the source up.
func (src AddressSource) low() int64 {
	return max(int64(src.Gap), 2*int64(src.Gap)-roundSize)
}

// drainedError is allocate's answer when no pre-derived address of network
// is free: the transaction rolls back and the request waits for the
// replenisher (whenReplenished).
type drainedError struct{ network payment.Network }

func (e drainedError) Error() string {
	return fmt.Sprintf("no pre-derived %s address is free", e.network)
}

// replenishRounds bounds how many replenisher rounds a request waits for
// before it gives up. A round derives enough for the requests that waited
// when it started, so one that finds none free again lost its new address
// to a request that came later; that many times in a row means the
// replenisher cannot keep up at all.
const replenishRounds = 32

// whenReplenished runs attempt, and again after a round of the replenisher
// each time attempt found no free pre-derived address.
func whenReplenished[V any](ctx context.Context, s *Service, attempt func() (Result[V], error)) (Result[V], error) {
	var d drainedError
	for range replenishRounds {
		res, err := attempt()
		if !errors.As(err, &d) {
			return res, err
		}
		s.mu.Lock()
		s.waiting[d.network]++
		s.mu.Unlock()
		r := s.replenishSoon(d.network)
		if !s.running.Load() {
			_ = s.runRound(ctx, d.network) // its error is r.err
		}
		select {
		case <-r.done:
		case <-ctx.Done():
		}
		s.mu.Lock()
		s.waiting[d.network]--
		s.mu.Unlock()
		if ctx.Err() != nil {
			return Result[V]{}, ctx.Err()
		}
		if r.err != nil {
			return Result[V]{}, Fail(ChainUnavailable, "no %s address is free right now and deriving more failed; try again shortly", d.network)
		}
	}
	return Result[V]{}, Fail(ChainUnavailable, "no %s address is free right now: the replenisher is behind; try again shortly", d.network)
}

// deriveRange reserves n new indexes of the network's account key, derives
// them and stores them as free watched addresses.
func (s *Service) deriveRange(ctx context.Context, tx *store.Tx, network payment.Network, src AddressSource, n int64, now time.Time) ([]store.Address, error) {
	first, err := tx.ReserveIndexes(ctx, string(network), src.Source, n)
	if err != nil {
		return nil, err
	}
	if first+n > 1<<31 {
		return nil, fmt.Errorf("%s: derivation index space exhausted", network)
	}
	derived, err := addresses.DeriveRange(src.Deriver, uint32(first), int(n))
	if err != nil {
		return nil, fmt.Errorf("derive %s: %w", network, err)
	}
	rows := make([]store.Address, 0, n)
	for _, a := range derived {
		rows = append(rows, store.Address{Network: string(network), Key: a.Key, Address: a.String, Source: src.Source, Index: a.Index, CreatedAt: now, Store: src.Store})
	}
	if _, err := tx.AddAddresses(ctx, rows); err != nil {
		return nil, err
	}
	if err := tx.NotifyAddresses(ctx, string(network)); err != nil {
		return nil, err
	}
	return rows, nil
}

// replenishSoon asks Run to top the network's free pre-derived addresses
// up; a request made while one is pending is folded into it. It returns
// the round that will run next, so a caller can wait for it.
func (s *Service) replenishSoon(network payment.Network) *replenishRound {
	s.mu.Lock()
	r := s.next[network]
	if r == nil {
		r = &replenishRound{done: make(chan struct{})}
		s.next[network] = r
	}
	s.mu.Unlock()
	select {
	case s.wake[network] <- struct{}{}:
	default:
	}
	return r
}

// reportLow asks for a round after a creation took address a, of which
// too few are derived ahead (a.Ahead below the source's low mark).
func (s *Service) reportLow(network payment.Network, a store.Address) {
	counter := a.Index + 1 + a.Ahead // the derivation counter the taker saw
	s.mu.Lock()
	if seen, ok := s.lowSeen[network]; !ok || counter > seen {
		s.lowSeen[network] = counter
	}
	s.mu.Unlock()
	s.replenishSoon(network)
}

// replenishRound is one run of the replenisher: done is closed when it
// ends, and err is then its outcome.
type replenishRound struct {
	done chan struct{}
	err  error
}

// replenishTimeout bounds one background top-up.
const replenishTimeout = time.Minute

// Run tops up each derived network's pre-derived addresses in the
// background as creations take them (one replenisher per network), until
// ctx ends; it returns once they have all stopped. Without Run, a creation
// that finds none free runs the round itself, in its own transaction.
func (s *Service) Run(ctx context.Context) error {
	s.running.Store(true)
	defer s.running.Store(false)
	var wg sync.WaitGroup
	for network, wake := range s.wake {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					s.failNext(network, ctx.Err())
					return
				case <-wake:
				}
				if err := s.runRound(ctx, network); err != nil && ctx.Err() == nil {
					s.log.Warn("replenishing pre-derived addresses failed", "network", string(network), "err", err)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// runRound runs the network's next round: it derives for the requests
// waiting now and releases them when it ends.
func (s *Service) runRound(ctx context.Context, network payment.Network) error {
	s.mu.Lock()
	r := s.next[network]
	delete(s.next, network)
	waiting := int64(s.waiting[network])
	seen, reported := s.lowSeen[network]
	delete(s.lowSeen, network)
	answered := reported && waiting == 0 && seen < s.toppedTo[network]
	s.mu.Unlock()
	if answered {
		// Every report since the last round saw the counter before that
		// round's top-up: nothing was taken since that it did not count.
		if r != nil {
			close(r.done)
		}
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, replenishTimeout)
	defer cancel()
	err := s.replenish(rctx, network, waiting)
	if r != nil {
		r.err = err
		close(r.done)
	}
	if err == nil {
		s.vacuumIfDue(rctx, network) // after the waiting requests go on
	}
	return err
}

// failNext releases the requests waiting for the network's next round
// when the replenisher stops.
func (s *Service) failNext(network payment.Network, err error) {
	s.mu.Lock()
	r := s.next[network]
	delete(s.next, network)
	s.mu.Unlock()
	if r != nil {
		r.err = err
		close(r.done)
	}
}

// Replenish makes sure at least Gap addresses of the network are derived
// and watched but not handed out: payments to them are recorded as
// unknown_address rather than missed, and creations never wait to derive.
func (s *Service) Replenish(ctx context.Context, network payment.Network) error {
	return s.replenish(ctx, network, 0)
}

// replenish is Replenish for a round with waiting requests waiting for a
// free address: it derives enough for them too, even when the gap is kept.
func (s *Service) replenish(ctx context.Context, network payment.Network, waiting int64) error {
	src := s.opt.Addresses[network]
	if src.Deriver == nil || src.Gap <= 0 {
		return nil
	}
	free, err := s.store.FreeDerived(ctx, string(network), src.Source)
	if err != nil || free >= src.low()+waiting {
		return err
	}
	return s.topUp(ctx, network, src, free, waiting)
}

// topUp derives what the network's source needs above free, its free
// addresses counted below its low mark (plus waiting).
func (s *Service) topUp(ctx context.Context, network payment.Network, src AddressSource, free, waiting int64) error {
	// Top up to twice the gap so a burst does not refill one at a time.
	need := 2*int64(src.Gap) + waiting - free
	var rows []store.Address
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		rows, err = s.deriveRange(ctx, tx, network, src, need, s.now().UTC())
		return err
	})
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		s.mu.Lock()
		s.toppedTo[network] = max(s.toppedTo[network], rows[len(rows)-1].Index+1)
		s.mu.Unlock()
	}
	if s.opt.Watcher != nil {
		keys := make([][]byte, len(rows))
		for i, r := range rows {
			keys[i] = r.Key
		}
		s.opt.Watcher.Watch(network, keys...)
	}
	return nil
}

// vacuumIfDue vacuums the free-address queue once the rounds since its
// last vacuum derived a gap's worth of addresses, as many as were claimed:
// each claim left its entry at the front of the queue the next claims read.
func (s *Service) vacuumIfDue(ctx context.Context, network payment.Network) {
	gap := int64(s.opt.Addresses[network].Gap)
	s.mu.Lock()
	due := s.toppedTo[network]-s.vacuumedTo[network] >= gap
	if due {
		s.vacuumedTo[network] = s.toppedTo[network]
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if err := s.store.VacuumFreeAddresses(ctx); err != nil {
		s.log.Warn("vacuuming the free-address queue failed", "err", err)
	}
}

// EnsureLookahead replenishes every derived network's free addresses, as
// Replenish of each would, with their free addresses counted in one
// statement: a start that needs nothing derived costs that one; serve
// calls it at start.
func (s *Service) EnsureLookahead(ctx context.Context) error {
	var nets, sources []string
	for n, src := range s.opt.Addresses {
		if src.Deriver != nil && src.Gap > 0 {
			nets = append(nets, string(n))
		}
	}
	sort.Strings(nets)
	for _, n := range nets {
		sources = append(sources, s.opt.Addresses[payment.Network(n)].Source)
	}
	free, err := s.store.FreeDerivedEach(ctx, nets, sources)
	if err != nil {
		return fmt.Errorf("look-ahead addresses: %w", err)
	}
	for i, n := range nets {
		src := s.opt.Addresses[payment.Network(n)]
		if free[i] >= src.low() {
			continue
		}
		if err := s.topUp(ctx, payment.Network(n), src, free[i], 0); err != nil {
			return fmt.Errorf("%s look-ahead addresses: %w", n, err)
		}
	}
	return nil
}
