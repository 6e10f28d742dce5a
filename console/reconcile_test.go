package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// The operator console shows the reconciler's runs and its findings with
// the node's answer and ours, and asks for a run (issue 27).
func TestNetworksPageShowsReconcilerFindings(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	h := int64(7)
	if _, _, err := s.Store.RecordFinding(ctx, store.Finding{Network: "bitcoin", Kind: store.FindingMissing, Status: store.FindingOpen,
		TxID: "ab12", Index: 1, Address: "bcrt1qexample", BlockHeight: &h, RangeFrom: 5, RangeTo: 9,
		NodeAnswer: "5000 base units of native to bcrt1qexample in block 7", Ours: "not recorded"}, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.StartReconcileRun(ctx, "bitcoin", 5, 9, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.FinishReconcileRun(ctx, store.ReconcileRun{Network: "bitcoin", LastBlocks: 5, LastCalls: 10, LastFindings: 1}, now); err != nil {
		t.Fatal(err)
	}
	c := s.client(t)
	csrf := c.signIn(t, s.Keys["operator"])
	resp, page := c.get(t, "/console/networks")
	if resp.StatusCode != 200 {
		t.Fatalf("networks: %d", resp.StatusCode)
	}
	for _, want := range []string{`id="reconcile-findings"`, "5000 base units of native to bcrt1qexample in block 7", "not recorded",
		`<code>ab12</code>:1`, `id="reconcile-runs"`, `action="/console/networks/bitcoin/reconcile"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the networks page lacks %q:\n%s", want, page)
		}
	}
	resp, body := c.post(t, "/console/networks/bitcoin/reconcile", url.Values{"csrf": {csrf}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("reconcile now: %d %s", resp.StatusCode, body)
	}
	if asked, err := s.Store.TakeReconcileRequest(ctx, "bitcoin"); err != nil || !asked {
		t.Fatalf("no run requested: %v %v", asked, err)
	}
	// Without the CSRF token nothing is asked.
	resp, _ = c.post(t, "/console/networks/bitcoin/reconcile", url.Values{})
	if resp.StatusCode == http.StatusSeeOther {
		t.Fatal("reconcile without csrf accepted")
	}
	if asked, _ := s.Store.TakeReconcileRequest(ctx, "bitcoin"); asked {
		t.Fatal("a run was requested without csrf")
	}
}

// Before any reconcile run the page does not say the records agree with
// the nodes: nothing was checked.
func TestNetworksPageBeforeAnyReconcileRun(t *testing.T) {
	s := newSite(t)
	c := s.client(t)
	c.signIn(t, s.Keys["operator"])
	resp, page := c.get(t, "/console/networks")
	if resp.StatusCode != 200 {
		t.Fatalf("networks: %d", resp.StatusCode)
	}
	if strings.Contains(page, `id="reconcile-clean"`) || !strings.Contains(page, `id="reconcile-never"`) || !strings.Contains(page, `id="reconcile-unchecked"`) {
		t.Fatalf("before any run the page claims agreement or does not say nothing ran:\n%s", page)
	}
}
