package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

var _ chains.KeyCursorSource = (*Keys)(nil)

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
	// Clock is the clock of reconciliations; nil is the wall clock.
	Clock clock.Clock

	mu      sync.Mutex
	after   map[payment.Network]int64
	checked map[payment.Network]time.Time
}

// DefaultReconcile is how often Keys.Refresh reconciles counts by default.
const DefaultReconcile = 5 * time.Minute

// Refresh adds the keys committed since the last refresh to set, and
// reloads them all when a due reconciliation finds set short.
func (k *Keys) Refresh(ctx context.Context, network payment.Network, set *chains.WatchSet) error {
	after, checked := k.since(network)
	last, err := k.Store.WatchedKeysSince(ctx, string(network), after, func(key []byte) { set.Add(key) })
	if err != nil {
		return err
	}
	return k.reconcile(ctx, network, set, after, last, checked)
}

// RefreshCursor is Refresh and the network's cursor (chains.ErrNoCursor
// before the first scan), the cursor and the new keys read in one round
// trip: what a scanner step reads first.
func (k *Keys) RefreshCursor(ctx context.Context, network payment.Network, set *chains.WatchSet) (chains.Cursor, error) {
	after, checked := k.since(network)
	c, found, last, err := k.Store.CursorAndKeysSince(ctx, string(network), after, func(key []byte) { set.Add(key) })
	if err != nil {
		return chains.Cursor{}, err
	}
	if err := k.reconcile(ctx, network, set, after, last, checked); err != nil {
		return chains.Cursor{}, err
	}
	if !found {
		return chains.Cursor{}, chains.ErrNoCursor
	}
	return scannerCursor(c), nil
}

// since returns the largest seq read so far for network and when its
// count was last reconciled.
func (k *Keys) since(network payment.Network) (int64, time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.after == nil {
		k.after, k.checked = map[payment.Network]int64{}, map[payment.Network]time.Time{}
	}
	return k.after[network], k.checked[network]
}

// reconcile records a refresh that read up to seq last, after comparing
// the set's size with the stored count when a reconciliation is due (and
// reloading every key on a shortfall).
func (k *Keys) reconcile(ctx context.Context, network payment.Network, set *chains.WatchSet, after, last int64, checked time.Time) error {
	now := clock.Or(k.Clock).Now
	every := k.Reconcile
	if every <= 0 {
		every = DefaultReconcile
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
