// Package reconciletest holds the reconciler's scenario run against each
// network's real or simulated node: a transfer lost behind paywatch's back is
// found by the next run and recorded again by the rescan it asks for.
package reconciletest

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Ctx is a context for one test, with a deadline.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Chain is one network under test: its Env (database, service, scanner),
// the view the reconciler reads and how to pay one of our addresses.
type Chain struct {
	N    payment.Network
	E    *paywatchtest.Env
	View reconcile.View
	// Pay pays v's amount to v's address, mines it in and returns the txid.
	Pay func(t *testing.T, v views.Intent) string
	// Method is the method the intents use.
	Method string
}

// Lose deletes a recorded transfer behind paywatch's back, as a lost write
// would: the rows that refer to it stay (foreign keys are not enforced for
// this one statement).
func Lose(t *testing.T, st *store.Store, id string) {
	t.Helper()
	ctx := Ctx(t)
	conn, err := st.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if tag, err := tx.Exec(ctx, `DELETE FROM transfers WHERE id = $1`, id); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("delete transfer %s: %v (%d rows)", id, err, tag.RowsAffected())
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func NewReconciler(t *testing.T, c *Chain) *reconcile.Reconciler {
	t.Helper()
	r, err := reconcile.New(c.E.Store, reconcile.Config{Blocks: 50, RatePerSecond: -1},
		map[payment.Network]reconcile.View{c.N: c.View}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// LostTransferFound is the scenario every network passes: a payment is
// recorded, its transfer is deleted behind paywatch's back, the next run
// finds it missing and asks for a rescan, the rescan records it again and
// the re-check resolves the finding.
func LostTransferFound(t *testing.T, c *Chain) {
	ctx := Ctx(t)
	r := NewReconciler(t, c)
	c.E.Sync(c.N)
	if rep, err := r.RunOnce(ctx, c.N); err != nil || len(rep.Findings) != 0 {
		t.Fatalf("clean run: %+v, %v", rep, err)
	}
	v := c.E.CreateIntent("order", "REC-1", "", "20.00", c.Method)
	txid := c.Pay(t, v)
	c.E.Sync(c.N)
	got := c.E.Intent(v.ID)
	if len(got.Transfers) != 1 || got.Transfers[0].TxID != txid {
		t.Fatalf("payment not recorded: %+v", got.Transfers)
	}
	tr := got.Transfers[0]
	rep, err := r.RunOnce(ctx, c.N)
	if err != nil || len(rep.Findings) != 0 {
		t.Fatalf("run with the payment recorded: %+v, %v", rep.Findings, err)
	}
	if *tr.BlockHeight < rep.From || *tr.BlockHeight > rep.To {
		t.Fatalf("the run checked [%d, %d], the payment is in block %d", rep.From, rep.To, *tr.BlockHeight)
	}

	Lose(t, c.E.Store, tr.ID)
	rep, err = r.RunOnce(ctx, c.N)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("run after the loss: %d findings %+v", len(rep.Findings), rep.Findings)
	}
	f := rep.Findings[0]
	if f.Kind != store.FindingMissing || f.Status != store.FindingRescanning || f.TxID != txid || f.Index != tr.Index ||
		f.BlockHeight == nil || *f.BlockHeight != *tr.BlockHeight || f.Address != tr.Address {
		t.Fatalf("finding %+v for transfer %+v", f, tr)
	}
	cur, err := c.E.Store.GetCursor(ctx, string(c.N))
	if err != nil || cur.RescanFrom == nil || *cur.RescanFrom != *tr.BlockHeight {
		t.Fatalf("no rescan requested from %d: %+v, %v", *tr.BlockHeight, cur, err)
	}
	// A run before the rescan is done changes nothing and adds nothing.
	if again, err := r.RunOnce(ctx, c.N); err != nil || again.Skipped == "" || len(again.Rechecked) != 0 {
		t.Fatalf("run with the rescan pending: %+v, %v", again, err)
	}
	c.E.Sync(c.N) // the scanner rescans
	back, err := c.E.Store.TransferByKey(ctx, string(c.N), txid, tr.Index)
	if err != nil || back.Amount.String() != tr.AmountBaseUnits || back.Status == payment.TransferOrphaned {
		t.Fatalf("the rescan did not record the transfer again: %+v, %v", back, err)
	}
	rep, err = r.RunOnce(ctx, c.N)
	if err != nil || len(rep.Rechecked) != 1 || rep.Rechecked[0].ID != f.ID || rep.Rechecked[0].Status != store.FindingResolved {
		t.Fatalf("re-check after the rescan: %+v, %v", rep, err)
	}
	if len(rep.Findings) != 0 {
		t.Fatalf("findings after the rescan: %+v", rep.Findings)
	}
	open, err := c.E.Store.Findings(ctx, string(c.N), "", 10)
	if err != nil || len(open) != 0 {
		t.Fatalf("live findings: %+v, %v", open, err)
	}
	if got := c.E.Intent(v.ID); len(got.Transfers) != 1 || got.Transfers[0].TxID != txid {
		t.Fatalf("intent after the rescan: %+v", got.Transfers)
	}
}

// CountingTransport counts the HTTP requests it carries: node calls.
type CountingTransport struct {
	Base  http.RoundTripper
	calls atomic.Int64
}

// RoundTrip implements http.RoundTripper.
func (c *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	return c.Base.RoundTrip(r)
}

// Calls returns the requests carried so far.
func (c *CountingTransport) Calls() int64 { return c.calls.Load() }

// CallsPerRun runs the reconciler once over the last blocks blocks of c's
// scanned chain, with view reading the node through counter, and returns
// the node calls the run made (counted at the HTTP layer).
func CallsPerRun(t *testing.T, c *Chain, blocks int64, counter *CountingTransport) int64 {
	t.Helper()
	r, err := reconcile.New(c.E.Store, reconcile.Config{Blocks: blocks, RatePerSecond: -1},
		map[payment.Network]reconcile.View{c.N: c.View}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := counter.Calls()
	rep, err := r.RunOnce(Ctx(t), c.N)
	if err != nil || rep.Blocks != blocks || len(rep.Findings) != 0 {
		t.Fatalf("run: %+v, %v", rep, err)
	}
	return counter.Calls() - before
}
