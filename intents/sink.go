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

var _ chains.Sink = (*Service)(nil)
var _ chains.KeySource = (*Keys)(nil)

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
	return chains.Cursor{Height: c.Height, Hash: c.Hash, Critical: c.Critical, RescanFrom: c.RescanFrom, Final: c.FinalHeight}, nil
}

// InitCursor creates the cursor of a network at (height, hash) and records
// the block ref.
func (s *Service) InitCursor(ctx context.Context, network payment.Network, height int64, hash string) error {
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
func (s *Service) BlockHash(ctx context.Context, network payment.Network, height int64) (string, error) {
	b, err := s.store.BlockAt(ctx, string(network), height)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%s block %d: %w", network, height, chains.ErrNoStoredBlock)
	}
	return b.Hash, err
}

// Reset moves the cursor back for a rescan without orphaning anything and
// clears the rescan request.
func (s *Service) Reset(ctx context.Context, network payment.Network, height int64, hash string) error {
	n := string(network)
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

// Keys refreshes scanners' watched sets from the addresses table. It reads
// only rows newer than the last refresh minus an overlap, so a row committed
// late with an older timestamp is still picked up.
type Keys struct {
	Store *store.Store
	// Overlap re-reads this much history on every refresh.
	Overlap time.Duration

	mu     sync.Mutex
	newest map[payment.Network]time.Time
}

// Refresh adds keys created since the last refresh to set.
func (k *Keys) Refresh(ctx context.Context, network payment.Network, set *chains.WatchSet) error {
	k.mu.Lock()
	if k.newest == nil {
		k.newest = map[payment.Network]time.Time{}
	}
	after := k.newest[network]
	k.mu.Unlock()
	overlap := k.Overlap
	if overlap == 0 {
		overlap = 30 * time.Second
	}
	since := time.Time{}
	if !after.IsZero() {
		since = after.Add(-overlap)
	}
	newest, err := k.Store.WatchedKeys(ctx, string(network), since, func(key []byte) { set.Add(key) })
	if err != nil {
		return err
	}
	k.mu.Lock()
	if newest.After(k.newest[network]) {
		k.newest[network] = newest
	}
	k.mu.Unlock()
	return nil
}
