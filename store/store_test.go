package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

var (
	dbOnce sync.Once
	dbURL  string
	shared *store.Store
)

// fresh returns a store on a database of its own, migrated, closed when
// the test ends: for a test whose effects are observed after commit.
func fresh(tb testing.TB) *store.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, devnettest.Database(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return s
}

// open returns one migrated database for the package; each test works in
// its own rolled-back transaction.
func open(t *testing.T) *store.Store {
	t.Helper()
	dbOnce.Do(func() {
		dbURL = devnettest.Database(&onceT{t})
		s, err := store.Open(context.Background(), dbURL)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if _, err := s.Migrate(context.Background()); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		shared = s
	})
	if shared == nil {
		t.Fatal("no database")
	}
	return shared
}

// onceT lets the package database outlive the first test (dropped by the
// cluster's lifetime, not the test's).
type onceT struct{ *testing.T }

func (o *onceT) Cleanup(func()) {}

func inTx(t *testing.T) (*store.Tx, context.Context) {
	t.Helper()
	ctx := context.Background()
	tx, err := open(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	return tx, ctx
}

var now = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

func payable(t *testing.T, tx *store.Tx, ctx context.Context, kind, ref string) store.Payable {
	t.Helper()
	acct := ""
	if kind == "topup" {
		acct = "cust-1"
	}
	p, err := tx.EnsurePayable(ctx, store.Payable{Kind: payment.PayableKind(kind), Reference: ref, Account: acct, AmountCents: 10000, CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func intent(p store.Payable, id, addr string) store.Intent {
	return store.Intent{ID: id, PayableID: p.ID, Method: "BTC", Network: "bitcoin", Asset: "native",
		Amount: big.NewInt(200000), Tolerance: big.NewInt(0), DustMin: big.NewInt(0), Address: addr, AddressKey: []byte(addr),
		Rate: "50000", RateSources: []string{"static"}, RateAt: now, ExpiresAt: now.Add(30 * time.Minute),
		Status: "awaiting_payment", ConfirmationsRequired: 2, CreatedAt: now}
}

func TestMigrateTwiceIsHarmless(t *testing.T) {
	s := open(t)
	n, err := s.Migrate(context.Background())
	if err != nil || n != 0 {
		t.Fatalf("second migrate applied %d: %v", n, err)
	}
	if p, err := s.Pending(context.Background()); err != nil || p != 0 {
		t.Fatalf("pending %d: %v", p, err)
	}
}

func TestEnsurePayableIsIdempotent(t *testing.T) {
	tx, ctx := inTx(t)
	a := payable(t, tx, ctx, "order", "ORD-1")
	b := payable(t, tx, ctx, "order", "ORD-1")
	if a.ID != b.ID {
		t.Fatalf("two payables for one reference: %d %d", a.ID, b.ID)
	}
}

func TestTopupNeedsAccount(t *testing.T) {
	tx, ctx := inTx(t)
	_, err := tx.EnsurePayable(ctx, store.Payable{Kind: "topup", Reference: "T-1", AmountCents: 10000, CreatedAt: now})
	if !errors.Is(err, store.ErrCheck) {
		t.Fatalf("topup without account: %v, want ErrCheck", err)
	}
}

func TestAddressUniquePerNetwork(t *testing.T) {
	tx, ctx := inTx(t)
	p := payable(t, tx, ctx, "order", "ORD-2")
	if err := tx.InsertIntent(ctx, intent(p, "pi_a", "bcrt1qa")); err != nil {
		t.Fatal(err)
	}
	err := tx.InsertIntent(ctx, intent(p, "pi_b", "bcrt1qa"))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second intent on one address: %v, want ErrConflict", err)
	}
}

func TestOnePaidIntentPerPayable(t *testing.T) {
	tx, ctx := inTx(t)
	p := payable(t, tx, ctx, "order", "ORD-3")
	for _, id := range []string{"pi_c", "pi_d"} {
		if err := tx.InsertIntent(ctx, intent(p, id, "addr-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	paid := store.IntentState{Status: "paid", Received: big.NewInt(1), ConfirmedSum: big.NewInt(1), PaidAt: &now}
	if err := tx.UpdateIntentState(ctx, "pi_c", paid, now); err != nil {
		t.Fatal(err)
	}
	if err := tx.UpdateIntentState(ctx, "pi_d", paid, now); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second paid intent: %v, want ErrConflict", err)
	}
}

func TestPayablePaidOnce(t *testing.T) {
	tx, ctx := inTx(t)
	p := payable(t, tx, ctx, "order", "ORD-4")
	if err := tx.SetPayablePaid(ctx, p.ID, "pi_x", now); err != nil {
		t.Fatal(err)
	}
	if err := tx.SetPayablePaid(ctx, p.ID, "pi_x", now); err != nil {
		t.Fatalf("same intent again must be idempotent: %v", err)
	}
	if err := tx.SetPayablePaid(ctx, p.ID, "pi_y", now); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another intent: %v, want ErrConflict", err)
	}
	if err := tx.SetPayablePaidByEntry(ctx, p.ID, "le_1", now); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a debit on a paid order: %v, want ErrConflict", err)
	}
}

func TestStatusAndAmountsAreChecked(t *testing.T) {
	cases := map[string]func(*store.Intent){
		"unknown status":  func(i *store.Intent) { i.Status = "lost" },
		"zero amount":     func(i *store.Intent) { i.Amount = big.NewInt(0) },
		"negative amount": func(i *store.Intent) { i.Amount = big.NewInt(-5) },
		"unknown method":  func(i *store.Intent) { i.Method = "DOGE" },
		"negative rate":   func(i *store.Intent) { i.Rate = "-1" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			tx, ctx := inTx(t)
			p := payable(t, tx, ctx, "order", "ORD-5")
			in := intent(p, "pi_e", "addr-e")
			mutate(&in)
			if err := tx.InsertIntent(ctx, in); !errors.Is(err, store.ErrCheck) {
				t.Fatalf("%s: %v, want ErrCheck", name, err)
			}
		})
	}
}

func TestTransferUpsertKeepsIdentityOnNaturalKey(t *testing.T) {
	tx, ctx := inTx(t)
	h := int64(100)
	tr := store.Transfer{ID: "tr_1", Network: "bitcoin", TxID: "aa", Index: 1, Asset: "native", Address: "a", AddressKey: []byte("a"),
		Amount: big.NewInt(5), FirstSeenAt: now, Status: "pending", ConfirmationsRequired: 2, Classification: "partial", CreatedAt: now}
	first, inserted, err := tx.UpsertTransfer(ctx, tr)
	if err != nil || !inserted {
		t.Fatalf("insert: %v %v", inserted, err)
	}
	tr.ID, tr.BlockHeight, tr.BlockHash, tr.Status, tr.FirstSeenAt = "tr_2", &h, "bb", "confirming", now.Add(time.Hour)
	second, inserted, err := tx.UpsertTransfer(ctx, tr)
	if err != nil || inserted {
		t.Fatalf("upsert: %v %v", inserted, err)
	}
	if second.ID != first.ID || !second.FirstSeenAt.Equal(now) || second.Status != "confirming" || *second.BlockHeight != 100 {
		t.Fatalf("upsert changed identity or lost the update: %+v", second)
	}
	neg := tr
	neg.TxID, neg.Amount = "cc", big.NewInt(-1)
	if _, _, err := tx.UpsertTransfer(ctx, neg); !errors.Is(err, store.ErrCheck) {
		t.Fatalf("negative amount: %v, want ErrCheck", err)
	}
}

func TestBalanceNeverNegative(t *testing.T) {
	tx, ctx := inTx(t)
	if _, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: store.DefaultStore, Account: "cust-9", Type: "credit", AmountCents: 500, Reference: "T"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: store.DefaultStore, Account: "cust-9", Type: "debit", AmountCents: 600, Reference: "O-1"}, now); !errors.Is(err, store.ErrInsufficientFunds) {
		t.Fatalf("overdraft: %v", err)
	}
	e, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: store.DefaultStore, Account: "cust-9", Type: "reversal", AmountCents: 800, Reference: "T"}, now)
	if err != nil || e.BalanceAfter != 0 || e.UnrecoveredCents != 300 {
		t.Fatalf("reversal beyond balance: %+v %v", e, err)
	}
}

func TestIdempotencyClaim(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	_, key, err := s.CreateAPIKey(ctx, "idem-"+time.Now().Format("150405.000000"), []string{"storefront"}, now)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	_, claimed, err := tx.ClaimIdempotencyKey(ctx, key.ID, "k", []byte("h1"), now)
	if err != nil || !claimed {
		t.Fatalf("first claim: %v %v", claimed, err)
	}
	if err := tx.SaveIdempotentResponse(ctx, key.ID, "k", 201, []byte("body")); err != nil {
		t.Fatal(err)
	}
	prev, claimed, err := tx.ClaimIdempotencyKey(ctx, key.ID, "k", []byte("h2"), now)
	if err != nil || claimed || string(prev.Body) != "body" || string(prev.RequestHash) != "h1" || prev.Status != 201 {
		t.Fatalf("second claim: %+v %v %v", prev, claimed, err)
	}
}

func TestLeaseIsExclusiveAndReleasable(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	a, ok, err := s.TryLease(ctx, "test-network", store.LeaseConfig{Holder: "a"})
	if err != nil || !ok {
		t.Fatalf("first lease: %v %v", ok, err)
	}
	if _, ok, err := s.TryLease(ctx, "test-network", store.LeaseConfig{Holder: "b"}); err != nil || ok {
		t.Fatalf("second lease while held: ok=%v err=%v", ok, err)
	}
	if h, live, _, err := s.Leaseholder(ctx, "test-network"); err != nil || h != "a" || !live {
		t.Fatalf("leaseholder: %q live=%v %v", h, live, err)
	}
	a.Release()
	a.Release()
	b, ok, err := s.TryLease(ctx, "test-network", store.LeaseConfig{Holder: "b"})
	if err != nil || !ok {
		t.Fatalf("lease after release: %v %v", ok, err)
	}
	if b.Token() != a.Token()+1 {
		t.Fatalf("token after a takeover: %d, want %d", b.Token(), a.Token()+1)
	}
	b.Release()
}

// waitLease tries for the lease of name until it is taken (the holder's
// lease expired by the database's clock), for up to a minute.
func waitLease(t *testing.T, s *store.Store, name, holder string) *store.Lease {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		l, ok, err := s.TryLease(context.Background(), name, store.LeaseConfig{Holder: holder, TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the lease of %s was never taken", holder, name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A holder that stops renewing (frozen: here its renewals wait on a fake
// clock that never moves) loses the lease when it expires by the
// database's clock; the standby takes it with a new token, and every write
// the ex-leader makes with its stale fence fails with ErrFenced and changes
// nothing (issue 32 item 6), while the new leader's writes go through.
func TestAnExLeadersWriteWithAStaleTokenFailsAndChangesNothing(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	frozen := clock.NewFake(now)
	a, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "a", TTL: time.Second, Clock: frozen})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	defer a.Release()
	write := func(f *store.Fence, height int64) error {
		return s.InTx(ctx, func(tx *store.Tx) error {
			tx.Fence(f)
			if err := tx.InitCursor(ctx, "bitcoin", 0, "genesis", now); err != nil {
				return err
			}
			return tx.SetCursor(ctx, "bitcoin", height, fmt.Sprintf("h%d", height), nil, now)
		})
	}
	if err := write(a.Fence(), 5); err != nil {
		t.Fatalf("the leader's write: %v", err)
	}
	b := waitLease(t, s, "scanner.bitcoin", "b")
	defer b.Release()
	if b.Token() <= a.Token() {
		t.Fatalf("takeover token %d not above %d", b.Token(), a.Token())
	}
	if err := write(a.Fence(), 7); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the ex-leader's write: %v, want ErrFenced", err)
	}
	if err := s.SetHealth(ctx, "bitcoin", false, "ex-leader", "", "a", now, a.Fence()); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the ex-leader's health record: %v, want ErrFenced", err)
	}
	// A network without a cursor keeps its health elsewhere: not written either.
	if err := s.SetHealth(ctx, "litecoin", false, "ex-leader", "", "a", now, a.Fence()); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the ex-leader's health record before a cursor: %v, want ErrFenced", err)
	}
	if h, err := s.PreCursorHealth(ctx, "litecoin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the ex-leader's health record before a cursor was written: %+v %v", h, err)
	}
	c, err := s.GetCursor(ctx, "bitcoin")
	if err != nil || c.Height != 5 || c.Leader != "" || c.LastError != "" {
		t.Fatalf("after the ex-leader's writes: %+v %v (want height 5, nothing else)", c, err)
	}
	if err := write(b.Fence(), 8); err != nil {
		t.Fatalf("the new leader's write: %v", err)
	}
	if err := s.SetHealth(ctx, "bitcoin", true, "", "", "b", now, b.Fence()); err != nil {
		t.Fatalf("the new leader's health record: %v", err)
	}
	if c, err := s.GetCursor(ctx, "bitcoin"); err != nil || c.Height != 8 || c.Leader != "b" {
		t.Fatalf("after the new leader's writes: %+v %v", c, err)
	}
	// The ex-leader, woken, finds at its next renewal that the lease moved.
	frozen.Advance(time.Second)
	select {
	case <-a.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("the ex-leader's renewal did not notice the takeover")
	}
}

// A leader frozen inside a fenced transaction holds the lease row (and the
// rows it locked) only until the server ends its idle session (Fence.Idle
// is the TTL): the standby then takes over, and the frozen transaction
// commits nothing.
func TestALeaderFrozenInATransactionDoesNotBlockTheTakeover(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	frozen := clock.NewFake(now)
	a, ok, err := s.TryLease(ctx, "scanner.bitcoin", store.LeaseConfig{Holder: "a", TTL: time.Second, Clock: frozen})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	defer a.Release()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	tx.Fence(a.Fence())
	if err := tx.InitCursor(ctx, "bitcoin", 3, "h3", now); err != nil {
		t.Fatal(err)
	}
	// The holder stops here, its transaction open.
	b := waitLease(t, s, "scanner.bitcoin", "b")
	defer b.Release()
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("the frozen leader's transaction committed after the takeover")
	}
	if _, err := s.GetCursor(ctx, "bitcoin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the frozen leader's write is there: %v", err)
	}
}

// A lease whose context ends stops renewing: no goroutine of it is left,
// and its Release after that still gives the lease up.
func TestLeaseStopsWithItsContext(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	clk := clock.NewFake(now)
	bctx, bcancel := context.WithCancel(context.Background())
	b, ok, err := s.TryLease(bctx, "test-ctx", store.LeaseConfig{Holder: "b", Clock: clk})
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	waitGoroutines(t, "store.(*Lease).renew", 1)
	bcancel()
	waitGoroutines(t, "store.(*Lease).renew", 0)
	b.Release() // after shutdown began: still releases
	if c, ok, err := s.TryLease(ctx, "test-ctx", store.LeaseConfig{Holder: "c"}); err != nil || !ok {
		t.Fatalf("lease after a cancelled holder released it: %v %v", ok, err)
	} else {
		c.Release()
	}
}

func TestListenersStopWithRun(t *testing.T) {
	open(t)
	ctx := context.Background()
	app := store.NewID("notify")
	url := dbURL + "?application_name=" + app
	if strings.Contains(dbURL, "?") {
		url = dbURL + "&application_name=" + app
	}
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rctx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(rctx) }()
	sub, err := s.Notifier().Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listeners := func() int {
		var n int
		if err := shared.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
			app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := listeners(); n != 1 {
		t.Fatalf("%d listening sessions, want 1", n)
	}
	sub.Close() // the listener lingers for the next subscriber …
	cancel()    // … but not past the end of Run
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for listeners() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listening session outlived Run")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.Notifier().Subscribe(ctx); !errors.Is(err, store.ErrStopped) {
		t.Fatalf("Subscribe after Run ended: %v, want ErrStopped", err)
	}
}

// goroutinesIn counts the goroutines whose stack contains fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// waitGoroutines waits until exactly n goroutines run fn.
func waitGoroutines(t *testing.T, fn string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for goroutinesIn(fn) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines in %s, want %d", goroutinesIn(fn), fn, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAPIKeysAreHashedAndScoped(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	plain, k, err := s.CreateAPIKey(ctx, "shop-"+time.Now().Format("150405.000000"), []string{"storefront"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := s.Pool().QueryRow(ctx, "SELECT hash FROM api_keys WHERE id = $1", k.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if string(stored) == plain || len(stored) != 32 {
		t.Fatal("the key is not stored as a 32-byte hash")
	}
	got, err := s.APIKeyByPlain(ctx, plain)
	if err != nil || !got.HasScope("storefront") || got.HasScope("finance") {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	if err := s.RevokeAPIKey(ctx, k.Name, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.APIKeyByPlain(ctx, plain); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked key still works: %v", err)
	}
}

func TestEventsAfterWithoutTypeFilter(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	err := s.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.AppendEvent(ctx, "intent.created", "", "", "", map[string]string{"k": "v"}, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.EventsAfter(ctx, 0, nil, 10)
	if err != nil || len(evs) == 0 {
		t.Fatalf("EventsAfter with nil types: %d events, %v", len(evs), err)
	}
	evs, err = s.EventsAfter(ctx, 0, []string{"no.such.type"}, 10)
	if err != nil || len(evs) != 0 {
		t.Fatalf("EventsAfter with a type filter: %d events, %v", len(evs), err)
	}
}

func TestNewWebhookEndpointStartsAtBeginningOrNow(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var newest int64
	err := s.InTx(ctx, func(tx *store.Tx) error {
		ev, err := tx.AppendEvent(ctx, "intent.created", "", "", "", map[string]int{"n": 1}, now)
		newest = ev.Seq
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	suffix := time.Now().Format("150405.000000")
	if err := s.EnsureWebhookEndpoint(ctx, "all-"+suffix, "http://127.0.0.1:1/a", "", false, now); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureWebhookEndpoint(ctx, "now-"+suffix, "http://127.0.0.1:1/b", "", true, now); err != nil {
		t.Fatal(err)
	}
	cursor := func(name string) int64 {
		var seq int64
		if err := s.Pool().QueryRow(ctx, "SELECT last_seq FROM webhook_endpoints WHERE name = $1", name).Scan(&seq); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	if got := cursor("all-" + suffix); got != 0 {
		t.Fatalf("a beginning endpoint starts at %d, want 0", got)
	}
	if got := cursor("now-" + suffix); got < newest {
		t.Fatalf("a now endpoint starts at %d, want at least %d", got, newest)
	}
	// An existing endpoint keeps its cursor whatever the setting says now.
	if err := s.EnsureWebhookEndpoint(ctx, "all-"+suffix, "http://127.0.0.1:1/a2", "", true, now); err != nil {
		t.Fatal(err)
	}
	if got := cursor("all-" + suffix); got != 0 {
		t.Fatalf("an existing endpoint's cursor moved to %d", got)
	}
}
