package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// standby is a second paywatch instance on the leader's database: its own
// store (connection pool), Service and clock, and no scanner.
func standby(t *testing.T, e *paywatchtest.Env, now func() time.Time) *intents.Service {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, e.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	cfg := *e.Config
	cfg.Instance = "standby"
	book := rates.NewBook(rates.BookConfig{MaxAge: 24 * 365 * time.Hour, MinSources: 1, Clock: clock.Func(now)},
		[]rates.Provider{rates.NewStatic(paywatchtest.Prices)}, []string{"BTC"}, nil)
	book.Refresh(ctx)
	nc := cfg.Networks["bitcoin"]
	der, err := addresses.NewDeriver(payment.Bitcoin, nc.AccountKey, nc.Chain)
	if err != nil {
		t.Fatal(err)
	}
	fp, _ := addresses.Fingerprint(nc.AccountKey)
	return intents.New(intents.Options{Store: st, Config: &cfg, Quotes: book, Chains: e.Nets, Clock: clock.Func(now),
		Addresses: map[payment.Network]intents.AddressSource{payment.Bitcoin: {Deriver: der, Source: fp, Gap: nc.Gap}}})
}

// An address handed out by a standby instance whose clock runs an hour
// behind the leader's is watched by the leader's scanner (the refresh is by
// a commit-ordered sequence, not by created_at), the standby's commit wakes
// the leader (LISTEN), and the payment to it is recorded by the leader.
func TestAddressFromAStandbyIsWatchedByTheLeader(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	behind := func() time.Time { return e.Clock.Now().Add(-time.Hour) }
	sb := standby(t, e, behind)
	keys := &ingest.Keys{Store: e.Store}
	woken := make(chan struct{}, 1)
	go func() {
		_ = keys.Listen(ctx, func() {
			select {
			case woken <- struct{}{}:
			default:
			}
		})
	}()
	// The leader's scanner, with its own watched set (the standby's
	// Service cannot add to it).
	watch := chains.NewWatchSet(64)
	nc := e.Config.Networks["bitcoin"]
	f := e.Chains[payment.Bitcoin]
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		f, e.Sink.ScannerSinks(), keys, watch, nil)
	step := func() {
		t.Helper()
		for i := 0; i < 100; i++ {
			caughtUp, err := sc.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if caughtUp {
				return
			}
		}
		t.Fatal("not caught up")
	}
	step()
	<-woken // the listener's first wake, once LISTEN is active
	// The standby hands out addresses until one is of its own making (the
	// pre-derived ones the leader already watched run out).
	var v views.Intent
	var created time.Time
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("the standby never handed out an address it derived")
		}
		res, err := sb.Create(ctx, intents.CreateRequest{Kind: "order", Reference: fmt.Sprintf("ORD-SB-%d", i), AmountUSD: "20.00", Method: "BTC"}, nil)
		if err != nil || res.Outcome != intents.Created {
			t.Fatalf("standby create: %d %+v %v", res.Outcome, res.View, err)
		}
		v = res.View
		if err := e.Store.Pool().QueryRow(ctx, `SELECT created_at FROM addresses WHERE network = 'bitcoin' AND address = $1`, v.Address).Scan(&created); err != nil {
			t.Fatal(err)
		}
		if created.Before(e.Clock.Now().Add(-30 * time.Minute)) {
			break
		}
	}
	select {
	case <-woken:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby's new addresses did not wake the leader (LISTEN)")
	}
	// A block pays it; the leader's scanner records the payment.
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "standby-pay")
	step()
	got := e.Intent(v.ID)
	if len(got.Transfers) != 1 || got.Status == "awaiting_payment" {
		t.Fatalf("payment to the standby's address %s (created %s, leader clock %s): %s %+v",
			v.Address, created, e.Clock.Now(), got.Status, got.Transfers)
	}
}

// A due reconciliation compares the watched set with the stored count and
// reloads a set that falls short, even when no new row was committed.
func TestKeysReconcileReloadsAShortSet(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	now := e.Clock.Now()
	keys := &ingest.Keys{Store: e.Store, Reconcile: time.Minute, Clock: clock.Func(func() time.Time { return now })}
	full := chains.NewWatchSet(64)
	if err := keys.Refresh(ctx, payment.Bitcoin, full); err != nil {
		t.Fatal(err)
	}
	stored, err := e.Store.CountAddresses(ctx, "bitcoin")
	if err != nil || stored == 0 || int64(full.Len()) != stored {
		t.Fatalf("first refresh: %d keys, %d stored (%v)", full.Len(), stored, err)
	}
	short := chains.NewWatchSet(64) // lost its keys (a restart of the set)
	if err := keys.Refresh(ctx, payment.Bitcoin, short); err != nil {
		t.Fatal(err)
	}
	if short.Len() != 0 {
		t.Fatalf("a refresh before the reconciliation is due read %d old keys", short.Len())
	}
	now = now.Add(time.Minute)
	if err := keys.Refresh(ctx, payment.Bitcoin, short); err != nil {
		t.Fatal(err)
	}
	if int64(short.Len()) != stored {
		t.Fatalf("after reconciliation: %d keys, %d stored", short.Len(), stored)
	}
}

// RefreshCursor refreshes the set as Refresh does (reconciliation
// included) and answers the network's cursor as the sink stores it:
// chains.ErrNoCursor before the first scan, the keys loaded all the same.
func TestRefreshCursorIsRefreshAndTheCursor(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	if _, err := e.Store.Pool().Exec(ctx, `DELETE FROM cursors`); err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now()
	keys := &ingest.Keys{Store: e.Store, Reconcile: time.Minute, Clock: clock.Func(func() time.Time { return now })}
	set := chains.NewWatchSet(64)
	if _, err := keys.RefreshCursor(ctx, payment.Bitcoin, set); !errors.Is(err, chains.ErrNoCursor) {
		t.Fatalf("before the first scan: %v, want chains.ErrNoCursor", err)
	}
	stored, err := e.Store.CountAddresses(ctx, "bitcoin")
	if err != nil || stored == 0 || int64(set.Len()) != stored {
		t.Fatalf("first refresh: %d keys, %d stored (%v)", set.Len(), stored, err)
	}
	if err := e.Sink.InitCursor(ctx, payment.Bitcoin, 7, "00ab"); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RequestRescan(ctx, "bitcoin", 3, now); err != nil {
		t.Fatal(err)
	}
	got, err := keys.RefreshCursor(ctx, payment.Bitcoin, set)
	want, werr := e.Sink.Cursor(ctx, payment.Bitcoin)
	if err != nil || werr != nil || got.Height != 7 || got.Hash != "00ab" || got.RescanFrom == nil || *got.RescanFrom != 3 ||
		got.Height != want.Height || got.Hash != want.Hash || *got.RescanFrom != *want.RescanFrom || got.Final != want.Final || got.Critical != want.Critical {
		t.Fatalf("cursor %+v (%v), the sink's %+v (%v)", got, err, want, werr)
	}
	short := chains.NewWatchSet(64) // lost its keys: the next due reconciliation reloads them
	if _, err := keys.RefreshCursor(ctx, payment.Bitcoin, short); err != nil || short.Len() != 0 {
		t.Fatalf("before the reconciliation is due: %d keys (%v)", short.Len(), err)
	}
	now = now.Add(time.Minute)
	if _, err := keys.RefreshCursor(ctx, payment.Bitcoin, short); err != nil || int64(short.Len()) != stored {
		t.Fatalf("after reconciliation: %d keys, %d stored (%v)", short.Len(), stored, err)
	}
}
