package reconcile_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/robfig/cron/v3"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/paywatchtest/reconciletest"
	"github.com/paywatch/paywatch/reconcile"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

const mainnetUSDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"

func TestReconcileLostTransferBtcd(t *testing.T) {
	node, err := devnet.StartBtcd(reconciletest.Ctx(t), t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	src, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: node.RPCURL})
	if err != nil {
		t.Fatal(err)
	}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, src))
	c := &reconciletest.Chain{N: payment.Bitcoin, E: e, Method: "BTC", View: &reconcile.BlockView{Source: src, Watched: e.Watch[payment.Bitcoin], CallsPerBlock: 2},
		Pay: func(t *testing.T, v views.Intent) string {
			a, err := addresses.ParseAddress(payment.Bitcoin, "regtest", v.Address)
			if err != nil {
				t.Fatal(err)
			}
			txid, err := node.Pay(reconciletest.Ctx(t), a.Key, paywatchtest.Units(v.AmountBaseUnits).Int64())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := node.Generate(reconciletest.Ctx(t), 1); err != nil {
				t.Fatal(err)
			}
			return txid
		}}
	reconciletest.LostTransferFound(t, c)
}

func TestReconcileLostTransferLitecoind(t *testing.T) {
	node, err := devnet.StartLitecoind(reconciletest.Ctx(t), t.TempDir(), 0, false)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "litecoind", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	src, err := bitcoin.New(bitcoin.Config{Network: payment.Litecoin, Chain: bitcoin.Regtest, URL: node.RPCURL,
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Litecoin), paywatchtest.WithSource(payment.Litecoin, src))
	c := &reconciletest.Chain{N: payment.Litecoin, E: e, Method: "LTC", View: &reconcile.BlockView{Source: src, Watched: e.Watch[payment.Litecoin], CallsPerBlock: 2},
		Pay: func(t *testing.T, v views.Intent) string {
			txid, err := node.SendToAddress(reconciletest.Ctx(t), v.Address, paywatchtest.Units(v.AmountBaseUnits).Int64())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := node.Generate(reconciletest.Ctx(t), 1); err != nil {
				t.Fatal(err)
			}
			return txid
		}}
	reconciletest.LostTransferFound(t, c)
}

// tronChain is a tronfake node behind a test server, with a request count.
func tronChain(t *testing.T) (*reconciletest.Chain, *tronfake.Node, *atomic.Int64) {
	node := tronfake.New()
	start := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC) // paywatchtest's clock
	if err := node.MineAt(start.Add(-25 * 3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	node.Mine(24)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		node.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	src, err := tron.New(tron.Config{URL: srv.URL, USDTContract: mainnetUSDT})
	if err != nil {
		t.Fatal(err)
	}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron), paywatchtest.WithSource(payment.Tron, src),
		paywatchtest.WithConfig(func(c *config.Config) {
			c.Methods[payment.USDTTRC20].Contract = mainnetUSDT
			start := int64(1) // scan the fake's first blocks too
			c.Networks[payment.Tron].StartHeight = &start
		}))
	c := &reconciletest.Chain{N: payment.Tron, E: e, Method: "TRX", View: &reconcile.BlockView{Source: src, Watched: e.Watch[payment.Tron], CallsPerBlock: 1},
		Pay: func(t *testing.T, v views.Intent) string {
			to, err := tron.ParseAddress(v.Address)
			if err != nil {
				t.Fatal(err)
			}
			txid := node.PayTRX([]byte("paywatch test payer!"), to, paywatchtest.Units(v.AmountBaseUnits).Int64(), true)
			node.Mine(1)
			return txid
		}}
	return c, node, &calls
}

func TestReconcileLostTransferTron(t *testing.T) {
	c, _, _ := tronChain(t)
	reconciletest.LostTransferFound(t, c)
}

func TestReconcileLostTransferSolana(t *testing.T) {
	node := solanafake.New()
	start := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	if err := node.MineAt(start.Add(-10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	node.Mine(10)
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	client, err := solana.New(solana.Config{URL: srv.URL, Mode: solana.ModeBlock})
	if err != nil {
		t.Fatal(err)
	}
	src := solana.NewModeSource(client)
	e := paywatchtest.New(t, paywatchtest.Only(payment.Solana), paywatchtest.WithSource(payment.Solana, src))
	c := &reconciletest.Chain{N: payment.Solana, E: e, Method: "SOL", View: &reconcile.SignatureView{Client: client},
		Pay: func(t *testing.T, v views.Intent) string {
			to, err := sol.PublicKeyFromBase58(v.Address)
			if err != nil {
				t.Fatal(err)
			}
			sig := node.PaySOL([32]byte{7, 7, 7}, to, paywatchtest.Units(v.AmountBaseUnits).Uint64(), false, false)
			node.Mine(1)
			return sig
		}}
	reconciletest.LostTransferFound(t, c)
}

// A node that answers garbage is a finding (node_error, open, with the
// node's answer), the range is not counted as checked, and nothing is
// silently skipped: the next good run checks the range.
func TestReconcileInconsistentNodeIsAFinding(t *testing.T) {
	c, node, _ := tronChain(t)
	ctx := reconciletest.Ctx(t)
	r := reconciletest.NewReconciler(t, c)
	c.E.Sync(c.N)
	node.FailNext(tronfake.FailGarbage)
	rep, err := r.RunOnce(ctx, c.N)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != store.FindingNodeError || rep.Findings[0].Status != store.FindingOpen ||
		rep.Findings[0].NodeAnswer == "" || rep.Findings[0].RangeFrom != rep.From || rep.Findings[0].RangeTo != rep.To {
		t.Fatalf("garbage answer: %+v", rep)
	}
	run, err := c.E.Store.ReconcileRunOf(ctx, string(c.N))
	if err != nil || run.CheckedTo != nil || run.LastError == "" || run.Runs != 1 {
		t.Fatalf("run state after a node error: %+v, %v", run, err)
	}
	// A node that changes chains between two block reads of one range,
	// and again when the range is read once more: the newest 3 blocks are
	// replaced just before block 25 is read, both times.
	for range 2 {
		for range 23 {
			node.OnNext("/wallet/getblockbynum", func() {})
		}
		node.OnNext("/wallet/getblockbynum", func() {
			if err := node.Reorg(3); err != nil {
				t.Error(err)
			}
		})
	}
	rep, err = r.RunRange(ctx, c.N, 2, rep.To) // blocks 2-24 read, then 23-25 replaced before 25 is
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != store.FindingNodeError {
		t.Fatalf("node switching chains during the check: %+v", rep)
	}
	open, err := c.E.Store.Findings(ctx, string(c.N), store.FindingOpen, 10)
	if err != nil || len(open) != 2 {
		t.Fatalf("open findings %+v, %v", open, err)
	}
	// One reorg during a read (ordinary near the tip) is read again, and
	// is no finding.
	for range 23 {
		node.OnNext("/wallet/getblockbynum", func() {})
	}
	node.OnNext("/wallet/getblockbynum", func() {
		if err := node.Reorg(3); err != nil {
			t.Error(err)
		}
	})
	if rep, err = r.RunRange(ctx, c.N, 1, rep.To); err != nil || len(rep.Findings) != 0 || rep.Calls < 24+25 {
		t.Fatalf("one reorg during the read: %+v, %v", rep, err)
	}
}

// The cost to the nodes: node calls of one run over 1,000 Tron blocks
// (each block one getblockbynum, plus its transaction infos when a contract
// ran in it), counted at the node.
func TestReconcileCallsPer1000Blocks(t *testing.T) {
	c, node, calls := tronChain(t)
	ctx := reconciletest.Ctx(t)
	c.E.Sync(c.N) // the scanner starts at the tip
	node.Mine(1000)
	c.E.Sync(c.N)
	r, err := reconcile.New(c.E.Store, reconcile.Config{Blocks: 1000, RatePerSecond: -1},
		map[payment.Network]reconcile.View{c.N: c.View}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := calls.Load()
	rep, err := r.RunOnce(ctx, c.N)
	if err != nil || rep.Blocks != 1000 {
		t.Fatalf("run: %+v, %v", rep, err)
	}
	got := calls.Load() - before
	t.Logf("tron: %d node calls for a reconcile run over %d blocks", got, rep.Blocks)
	if got != 1000 || rep.Calls != 1000 {
		t.Fatalf("%d calls at the node (%d counted by the view) for 1,000 blocks without contract calls, want 1,000", got, rep.Calls)
	}
}

// The findings are visible in GET /v1/status and a run is asked for with
// POST /v1/networks/{network}/reconcile (answers checked against
// api/openapi.yaml by the Env).
func TestReconcileStatusAndOnDemand(t *testing.T) {
	c, node, _ := tronChain(t)
	ctx := reconciletest.Ctx(t)
	r := reconciletest.NewReconciler(t, c)
	c.E.Sync(c.N)
	node.FailNext(tronfake.FailGarbage)
	if _, err := r.RunOnce(ctx, c.N); err != nil {
		t.Fatal(err)
	}
	code, body := c.E.Do("GET", "/v1/status", "operator", nil)
	if code != 200 {
		t.Fatalf("status %d %s", code, body)
	}
	var st struct {
		Reconcile struct {
			Runs []struct {
				Network   string `json:"network"`
				LastError string `json:"last_error"`
				Runs      int64  `json:"runs"`
			} `json:"runs"`
			OpenFindings int64 `json:"open_findings"`
			Findings     []struct {
				Kind, Status, NodeAnswer string
			} `json:"findings"`
		} `json:"reconcile"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	rec := st.Reconcile
	if rec.OpenFindings != 1 || len(rec.Findings) != 1 || rec.Findings[0].Kind != "node_error" || rec.Findings[0].Status != "open" ||
		len(rec.Runs) != 1 || rec.Runs[0].Network != "tron" || rec.Runs[0].Runs != 1 || rec.Runs[0].LastError == "" {
		t.Fatalf("status reconcile: %s", body)
	}
	if strings.Contains(string(body), "127.0.0.1") {
		t.Fatalf("a node URL in the status: %s", body)
	}
	for range 2 { // idempotent
		code, body = c.E.Do("POST", "/v1/networks/tron/reconcile", "operator", nil)
		if code != 202 {
			t.Fatalf("reconcile request: %d %s", code, body)
		}
	}
	if code, body = c.E.Do("POST", "/v1/networks/dogecoin/reconcile", "operator", nil); code != 404 {
		t.Fatalf("unknown network: %d %s", code, body)
	}
	if code, _ = c.E.Do("POST", "/v1/networks/tron/reconcile", "storefront", nil); code != 403 {
		t.Fatalf("storefront key: %d", code)
	}
	asked, err := c.E.Store.TakeReconcileRequest(ctx, "tron")
	if err != nil || !asked {
		t.Fatalf("request not stored: %v %v", asked, err)
	}
	if asked, _ := c.E.Store.TakeReconcileRequest(ctx, "tron"); asked {
		t.Fatal("the request was taken twice")
	}
}

// The cost to btcd of one run over 1,000 blocks, counted at the HTTP layer.
func TestReconcileCallsPer1000BlocksBtcd(t *testing.T) {
	node, err := devnet.StartBtcd(reconciletest.Ctx(t), t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	src, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: node.RPCURL})
	if err != nil {
		t.Fatal(err)
	}
	counter := &reconciletest.CountingTransport{Base: http.DefaultTransport}
	view, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: node.RPCURL,
		HTTPClient: &http.Client{Transport: counter, Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, src))
	e.Sync(payment.Bitcoin) // the scanner starts at the tip
	if _, err := node.Generate(reconciletest.Ctx(t), 1000); err != nil {
		t.Fatal(err)
	}
	e.Sync(payment.Bitcoin)
	c := &reconciletest.Chain{N: payment.Bitcoin, E: e, View: &reconcile.BlockView{Source: view, Watched: e.Watch[payment.Bitcoin]}}
	got := reconciletest.CallsPerRun(t, c, 1000, counter)
	t.Logf("bitcoin (btcd): %d node calls for a reconcile run over 1000 blocks", got)
	if got != 2000 {
		t.Fatalf("%d calls for 1,000 blocks, want 2,000 (getblockhash and getblock each)", got)
	}
}

// A transfer recorded that the node does not show (unexpected) asks for no
// rescan, is checked again and stays open for the operator with both
// answers.
func TestReconcileUnexpectedTransferStaysOpen(t *testing.T) {
	c, _, _ := tronChain(t)
	ctx := reconciletest.Ctx(t)
	r := reconciletest.NewReconciler(t, c)
	c.E.Sync(c.N)
	v := c.E.CreateIntent("order", "REC-PHANTOM", "", "20.00", "TRX")
	key, err := tron.ParseAddress(v.Address)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := c.E.Store.GetCursor(ctx, "tron")
	if err != nil {
		t.Fatal(err)
	}
	h := cur.Height - 1
	phantom := strings.Repeat("ab", 32)
	if err := c.E.Store.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := tx.UpsertTransfer(ctx, store.Transfer{ID: store.NewID("tr"), Network: "tron", TxID: phantom, Index: -1,
			Asset: "native", Address: v.Address, AddressKey: key, Amount: paywatchtest.Units("1000000"), IntentID: v.ID,
			BlockHeight: &h, BlockHash: "ffff", FirstSeenAt: c.E.Clock.Now(), Status: payment.TransferConfirmed,
			Classification: payment.Partial, CreatedAt: c.E.Clock.Now()})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := r.RunOnce(ctx, c.N)
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Kind != store.FindingUnexpected || rep.Findings[0].TxID != phantom ||
		!strings.Contains(rep.Findings[0].Ours, "1000000 base units") || !strings.Contains(rep.Findings[0].NodeAnswer, "not in the node's view") {
		t.Fatalf("phantom transfer: %+v, %v", rep.Findings, err)
	}
	if cur, err := c.E.Store.GetCursor(ctx, "tron"); err != nil || cur.RescanFrom != nil {
		t.Fatalf("a rescan was requested for a transfer the node does not show: %+v %v", cur, err)
	}
	rep, err = r.RunOnce(ctx, c.N)
	if err != nil || len(rep.Rechecked) != 1 || rep.Rechecked[0].Status != store.FindingOpen ||
		!strings.Contains(rep.Rechecked[0].Resolution, "did not explain") {
		t.Fatalf("re-check: %+v, %v", rep, err)
	}
	open, err := c.E.Store.Findings(ctx, "tron", store.FindingOpen, 10)
	if err != nil || len(open) != 1 || open[0].TxID != phantom {
		t.Fatalf("open findings: %+v, %v", open, err)
	}
}

// The reconciler keeps to its own call budget per node: a run over 10
// blocks at 20 calls a second spaces its 10 calls at least 50 ms apart.
func TestReconcileKeepsItsRateBudget(t *testing.T) {
	c, _, calls := tronChain(t)
	ctx := reconciletest.Ctx(t)
	c.E.Sync(c.N)
	r, err := reconcile.New(c.E.Store, reconcile.Config{Blocks: 10, RatePerSecond: 20},
		map[payment.Network]reconcile.View{c.N: c.View}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := calls.Load()
	start := time.Now()
	rep, err := r.RunOnce(ctx, c.N)
	if err != nil || rep.Blocks != 10 {
		t.Fatalf("run: %+v, %v", rep, err)
	}
	if got, took := calls.Load()-before, time.Since(start); got != 10 || took < 9*50*time.Millisecond {
		t.Fatalf("%d calls in %s: want 10, at least 450 ms apart in all", got, took)
	}
}

// The scheduled run is timed by the reconciler's clock: polls while the
// clock stands still or moves less than the schedule run nothing, and the
// schedule's next time runs every network once.
func TestReconcilerRunsOnItsClocksSchedule(t *testing.T) {
	c, _, _ := tronChain(t)
	ctx := reconciletest.Ctx(t)
	c.E.Sync(c.N)
	r, err := reconcile.New(c.E.Store, reconcile.Config{Schedule: cron.Every(time.Hour), Poll: time.Second, Clock: c.E.Clock, RatePerSecond: -1},
		map[payment.Network]reconcile.View{c.N: c.View}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	runs := func() int64 {
		rs, err := c.E.Store.ReconcileRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, r := range rs {
			n += r.Runs
		}
		return n
	}
	waiting := func() {
		t.Helper()
		wctx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		if err := c.E.Clock.BlockUntil(wctx, 1); err != nil {
			t.Fatalf("the reconciler does not wait on its clock: %v", err)
		}
	}
	waiting()
	for range 3 {
		c.E.Clock.Advance(time.Second) // a poll: nothing is due
		time.Sleep(20 * time.Millisecond)
		waiting()
	}
	if n := runs(); n != 0 {
		t.Fatalf("%d runs before the schedule's time", n)
	}
	c.E.Clock.Advance(time.Hour)
	deadline := time.Now().Add(15 * time.Second)
	for runs() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs an hour later, want 1", runs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A standby's watched set is empty (only the scanner's leader fills it):
// its reconciler, given the same request as the leader's, would report
// the network's real transfers as unexpected. Run leaves a network this
// instance does not lead to the leader, and the leader's run finds
// nothing (issue 32 item 6).
func TestAStandbysReconcilerLeavesTheNetworkToTheLeader(t *testing.T) {
	c, _, _ := tronChain(t)
	ctx := reconciletest.Ctx(t)
	c.E.Sync(c.N)
	v := c.E.CreateIntent("order", "REC-STANDBY", "", "20.00", "TRX")
	c.Pay(t, v)
	c.E.Sync(c.N)
	if got := c.E.Intent(v.ID); len(got.Transfers) != 1 {
		t.Fatalf("payment not recorded: %+v", got.Transfers)
	}
	run := func(view reconcile.View, leads bool) (stop func()) {
		r, err := reconcile.New(c.E.Store, reconcile.Config{Blocks: 50, Poll: time.Second, Clock: c.E.Clock, RatePerSecond: -1,
			Leads: func(payment.Network) bool { return leads }}, map[payment.Network]reconcile.View{c.N: view}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	runs := func() int64 {
		rs, err := c.E.Store.ReconcileRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, r := range rs {
			n += r.Runs
		}
		return n
	}
	if code, body := c.E.Do("POST", "/v1/networks/tron/reconcile", "operator", nil); code != 202 {
		t.Fatalf("reconcile request: %d %s", code, body)
	}
	standby := &reconcile.BlockView{Source: c.View.(*reconcile.BlockView).Source, Watched: chains.NewWatchSet(16), CallsPerBlock: 1}
	stop := run(standby, false)
	for range 3 { // three polls of the standby's reconciler
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := c.E.Clock.BlockUntil(wctx, 1); err != nil {
			t.Fatalf("the standby's reconciler does not poll: %v", err)
		}
		cancel()
		c.E.Clock.Advance(time.Second)
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if n := runs(); n != 0 {
		found, _ := c.E.Store.Findings(ctx, "tron", "", 10)
		t.Fatalf("the standby ran %d times; findings %+v", n, found)
	}
	stop = run(c.View, true)
	defer stop()
	deadline := time.Now().Add(30 * time.Second)
	for runs() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the leader did not take the request: %d runs", runs())
		}
		c.E.Clock.Advance(time.Second)
		time.Sleep(20 * time.Millisecond)
	}
	if found, err := c.E.Store.Findings(ctx, "tron", "", 10); err != nil || len(found) != 0 {
		t.Fatalf("the leader's run found %+v (%v)", found, err)
	}
}
