package ingest_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// loadScript is a P2WPKH-shaped script numbered i.
func loadScript(i int) []byte {
	k := make([]byte, 22)
	k[1] = 0x14
	binary.BigEndian.PutUint64(k[2:], uint64(i))
	binary.LittleEndian.PutUint64(k[10:], uint64(i)*0x9e3779b97f4a7c15)
	return k
}

// A key whose insert is under way while the daemon loads its watched set
// at start (its transaction began before the load and commits while the
// rows stream in), and a key inserted behind it, are both in the set after
// the load and the next refresh: the load is a snapshot, and the
// commit-ordered seq puts both above the last seq it saw.
func TestAKeyInsertedDuringTheInitialLoadIsWatched(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	at := e.Clock.Now()
	add := func(tx *store.Tx, from, n int) {
		t.Helper()
		as := make([]store.Address, n)
		for i := range as {
			as[i] = store.Address{Network: "bitcoin", Key: loadScript(from + i), Address: fmt.Sprintf("load-%d", from+i),
				Source: "load", Index: -1, CreatedAt: at}
		}
		if added, err := tx.AddAddresses(ctx, as); err != nil || added != n {
			t.Fatalf("AddAddresses: %d of %d (%v)", added, n, err)
		}
	}
	const preloaded = 50_000
	tx, err := e.Store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	add(tx, 0, preloaded)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// A's transaction holds the seq lock; B's insert waits behind it.
	a, b := loadScript(preloaded), loadScript(preloaded+1)
	txA, err := e.Store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback(ctx)
	add(txA, preloaded, 1)
	bDone := make(chan error, 1)
	go func() {
		tx, err := e.Store.Begin(ctx)
		if err == nil {
			as := []store.Address{{Network: "bitcoin", Key: b, Address: fmt.Sprintf("load-%d", preloaded+1), Source: "load", Index: -1, CreatedAt: at}}
			if _, err = tx.AddAddresses(ctx, as); err == nil {
				err = tx.Commit(ctx)
			} else {
				tx.Rollback(ctx)
			}
		}
		bDone <- err
	}()

	keys := &ingest.Keys{Store: e.Store, Reconcile: time.Hour}
	set := chains.NewWatchSet(preloaded)
	loaded := make(chan error, 1)
	go func() { loaded <- keys.Refresh(ctx, payment.Bitcoin, set) }()
	// Commit A once the load is streaming rows into the set (or done).
	var loadErr error
	finished := false
	for set.Len() == 0 && !finished {
		select {
		case loadErr = <-loaded:
			finished = true
		default:
			runtime.Gosched()
		}
	}
	if err := txA.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	if !finished {
		loadErr = <-loaded
	}
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	// The load began before A committed: it is a snapshot without A or B,
	// so the refresh below is what must find them.
	if set.Len() < preloaded || set.Contains(a) || set.Contains(b) {
		t.Fatalf("initial load: %d keys (want at least the %d committed before it), A watched %v, B watched %v",
			set.Len(), preloaded, set.Contains(a), set.Contains(b))
	}
	t.Logf("A committed %s the load returned", map[bool]string{false: "before", true: "after"}[finished])
	if err := keys.Refresh(ctx, payment.Bitcoin, set); err != nil {
		t.Fatal(err)
	}
	if !set.Contains(a) || !set.Contains(b) {
		t.Fatalf("after the load and a refresh: A watched %v, B watched %v", set.Contains(a), set.Contains(b))
	}
	stored, err := e.Store.CountAddresses(ctx, "bitcoin")
	if err != nil || int64(set.Len()) != stored {
		t.Fatalf("set holds %d keys, %d stored (%v)", set.Len(), stored, err)
	}
}
