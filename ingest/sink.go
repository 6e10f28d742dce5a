package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// The Sink is every role a scanner writes to (ScannerSinks).
var (
	_ chains.CursorStore     = (*Sink)(nil)
	_ chains.ChainHandler    = (*Sink)(nil)
	_ chains.HealthRecorder  = (*Sink)(nil)
	_ chains.BatchSink       = (*Sink)(nil)
	_ chains.BalanceSink     = (*Sink)(nil)
	_ chains.PendingRecorder = (*Sink)(nil)
)

// ScannerSinks returns the Sink in every role, optional ones included,
// a chains.Scanner writes to.
func (s *Sink) ScannerSinks() chains.Sinks {
	return chains.Sinks{Cursor: s, Chain: s, Health: s, Batch: s, Balance: s, Pending: s}
}

// Cursor returns the network's scan cursor (chains.ErrNoCursor before the
// first scan).
func (s *Sink) Cursor(ctx context.Context, network payment.Network) (chains.Cursor, error) {
	c, err := s.store.GetCursor(ctx, string(network))
	if errors.Is(err, store.ErrNotFound) {
		return chains.Cursor{}, chains.ErrNoCursor
	}
	if err != nil {
		return chains.Cursor{}, err
	}
	return scannerCursor(c), nil
}

// scannerCursor is the part of a stored cursor a scanner reads.
func scannerCursor(c store.Cursor) chains.Cursor {
	return chains.Cursor{Height: chains.Height(c.Height), Hash: c.Hash, Critical: c.Critical,
		RescanFrom: (*chains.Height)(c.RescanFrom), Final: chains.Height(c.FinalHeight)}
}

// InitCursor creates the cursor of a network at (height, hash) and records
// the block ref.
func (s *Sink) InitCursor(ctx context.Context, network payment.Network, at chains.Height, hash string) error {
	height := int64(at)
	return s.inTx(ctx, func(tx *store.Tx) error {
		// Sent with the commit: one round trip.
		tx.QueueInitCursor(string(network), store.BlockRef{Height: height, Hash: hash}, time.Time{}, s.now().UTC())
		return nil
	})
}

// BlockHash returns the stored hash at height: chains.ErrNoStoredBlock when
// none is kept there, any other error as it came (transient).
func (s *Sink) BlockHash(ctx context.Context, network payment.Network, height chains.Height) (string, error) {
	b, err := s.store.BlockAt(ctx, string(network), int64(height))
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%s block %d: %w", network, height, chains.ErrNoStoredBlock)
	}
	return b.Hash, err
}

var _ chains.BlockHashRange = (*Sink)(nil)

// BlockHashes returns the stored hashes from height from to height to, in
// one read: a height without a stored block has no entry.
func (s *Sink) BlockHashes(ctx context.Context, network payment.Network, from, to chains.Height) (map[chains.Height]string, error) {
	hs, err := s.store.BlockHashes(ctx, string(network), int64(from), int64(to))
	if err != nil {
		return nil, err
	}
	out := make(map[chains.Height]string, len(hs))
	for h, hash := range hs {
		out[chains.Height(h)] = hash
	}
	return out, nil
}

// Reset moves the cursor back for a rescan without orphaning anything and
// clears the rescan request.
func (s *Sink) Reset(ctx context.Context, network payment.Network, to chains.Height, hash string) error {
	n, height := string(network), int64(to)
	return s.inTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		if _, err := tx.CursorForUpdate(ctx, n); err != nil {
			return err
		}
		// Sent with the commit.
		tx.QueueResetCursor(n, store.BlockRef{Height: height, Hash: hash}, time.Time{}, now)
		return nil
	})
}

// SetHealth records the scanner's health.
func (s *Sink) SetHealth(ctx context.Context, network payment.Network, h chains.Health) error {
	return s.store.SetHealth(ctx, string(network), h.Healthy, h.LastError, h.Critical, s.instance(), s.now().UTC(), s.fence)
}

func (s *Sink) instance() string { return s.cfg.Instance }
