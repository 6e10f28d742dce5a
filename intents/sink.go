package intents

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// The Service is every role a scanner writes to (ScannerSinks).
var (
	_ chains.CursorStore     = (*Service)(nil)
	_ chains.ChainHandler    = (*Service)(nil)
	_ chains.HealthRecorder  = (*Service)(nil)
	_ chains.BatchSink       = (*Service)(nil)
	_ chains.BalanceSink     = (*Service)(nil)
	_ chains.PendingRecorder = (*Service)(nil)
)
var _ chains.KeySource = (*Keys)(nil)

// ScannerSinks returns the Service in every role, optional ones included,
// a chains.Scanner writes to.
func (s *Service) ScannerSinks() chains.Sinks {
	return chains.Sinks{Cursor: s, Chain: s, Health: s, Batch: s, Balance: s, Pending: s}
}

// Cursor returns the network's scan cursor (chains.ErrNoCursor before the
// first scan).
func (s *Service) Cursor(ctx context.Context, network payment.Network) (chains.Cursor, error) {
	c, err := s.store.GetCursor(ctx, string(network))
	if errors.Is(err, store.ErrNotFound) {
		return chains.Cursor{}, chains.ErrNoCursor
	}
	if err != nil {
		return chains.Cursor{}, err
	}
	return chains.Cursor{Height: chains.Height(c.Height), Hash: c.Hash, Critical: c.Critical,
		RescanFrom: (*chains.Height)(c.RescanFrom), Final: chains.Height(c.FinalHeight)}, nil
}

// InitCursor creates the cursor of a network at (height, hash) and records
// the block ref.
func (s *Service) InitCursor(ctx context.Context, network payment.Network, at chains.Height, hash string) error {
	height := int64(at)
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		if err := tx.InitCursor(ctx, string(network), height, hash, now); err != nil {
			return err
		}
		return tx.PutBlock(ctx, string(network), store.BlockRef{Height: height, Hash: hash}, time.Time{})
	})
}

// BlockHash returns the stored hash at height: chains.ErrNoStoredBlock when
// none is kept there, any other error as it came (transient).
func (s *Service) BlockHash(ctx context.Context, network payment.Network, height chains.Height) (string, error) {
	b, err := s.store.BlockAt(ctx, string(network), int64(height))
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%s block %d: %w", network, height, chains.ErrNoStoredBlock)
	}
	return b.Hash, err
}

// Reset moves the cursor back for a rescan without orphaning anything and
// clears the rescan request.
func (s *Service) Reset(ctx context.Context, network payment.Network, to chains.Height, hash string) error {
	n, height := string(network), int64(to)
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		if _, err := tx.CursorForUpdate(ctx, n); err != nil {
			return err
		}
		if err := tx.PutBlock(ctx, n, store.BlockRef{Height: height, Hash: hash}, time.Time{}); err != nil {
			return err
		}
		if err := tx.SetCursor(ctx, n, height, hash, nil, now); err != nil {
			return err
		}
		return tx.ClearRescan(ctx, n)
	})
}

// SetHealth records the scanner's health.
func (s *Service) SetHealth(ctx context.Context, network payment.Network, h chains.Health) error {
	return s.store.SetHealth(ctx, string(network), h.Healthy, h.LastError, h.Critical, s.instance(), s.now().UTC())
}

func (s *Service) instance() string { return s.cfg.Instance }

// Keys refreshes scanners' watched sets from the addresses table, by its
// commit-ordered seq (never by a writer's clock): each Refresh reads the rows
// after the largest seq it has seen, which no row committed late, by another
// instance or with a skewed clock, can fall behind. Every Reconcile it also
// compares the set's size with the stored count and reloads everything on a
// shortfall. Listen wakes a scanner on the addresses channel, so an address
// handed out by another instance is watched at once rather than at the next
// poll.
type Keys struct {
	Store *store.Store
	// Reconcile is how often Refresh compares counts; 0 means
	// DefaultReconcile.
	Reconcile time.Duration
	// Now is the clock of reconciliations; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	after   map[payment.Network]int64
	checked map[payment.Network]time.Time
}

// DefaultReconcile is how often Keys.Refresh reconciles counts by default.
const DefaultReconcile = 5 * time.Minute

// Refresh adds the keys committed since the last refresh to set, and
// reloads them all when a due reconciliation finds set short.
func (k *Keys) Refresh(ctx context.Context, network payment.Network, set *chains.WatchSet) error {
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	every := k.Reconcile
	if every <= 0 {
		every = DefaultReconcile
	}
	k.mu.Lock()
	if k.after == nil {
		k.after, k.checked = map[payment.Network]int64{}, map[payment.Network]time.Time{}
	}
	after, checked := k.after[network], k.checked[network]
	k.mu.Unlock()
	last, err := k.Store.WatchedKeysSince(ctx, string(network), after, func(key []byte) { set.Add(key) })
	if err != nil {
		return err
	}
	at := now()
	if after > 0 && (checked.IsZero() || at.Sub(checked) >= every || at.Before(checked)) {
		n, err := k.Store.CountAddresses(ctx, string(network))
		if err != nil {
			return err
		}
		if int64(set.Len()) < n {
			if last, err = k.Store.WatchedKeysSince(ctx, string(network), 0, func(key []byte) { set.Add(key) }); err != nil {
				return err
			}
		}
		checked = at
	} else if after == 0 {
		checked = at // a full load is a reconciliation
	}
	k.mu.Lock()
	k.after[network] = max(k.after[network], last)
	k.checked[network] = checked
	k.mu.Unlock()
	return nil
}

// Listen calls wake after every NOTIFY on the addresses channel (another
// instance added addresses) and after every reconnection of the listener,
// until ctx ends; it then returns nil.
func (k *Keys) Listen(ctx context.Context, wake func()) error {
	sub, err := k.Store.NotifierOn(store.AddressesChannel).Subscribe(ctx)
	if err != nil {
		return nil // ctx ended first
	}
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.C:
			wake()
		}
	}
}
