package tron_test

// Scenario tests: the tron Client pointed at a tronfake node over HTTP,
// scanned by the chain-neutral scanner into the intents service, a real
// PostgreSQL database and the HTTP API (paywatchtest). Tron is
// simulated here: no real Tron node runs in these tests.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// faultyNode serves a tronfake node and, when armed, makes exactly one
// request to path (for block num, or any num when num < 0) fail with kind.
// The failure is served by a second fake (failer) so that no concurrent
// request can take it from the node's failure queue.
type faultyNode struct {
	node, failer *tronfake.Node

	mu   sync.Mutex
	path string
	num  int64
	kind tronfake.Failure
	hits int
}

func (f *faultyNode) arm(path string, num int64, kind tronfake.Failure) {
	f.mu.Lock()
	f.path, f.num, f.kind = path, num, kind
	f.mu.Unlock()
}

// fired returns how many armed failures were served.
func (f *faultyNode) fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *faultyNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Num int64 `json:"num"`
	}
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	hit := f.kind != "" && r.URL.Path == f.path && (f.num < 0 || f.num == req.Num)
	kind := f.kind
	if hit {
		f.kind = ""
		f.hits++
	}
	f.mu.Unlock()
	if !hit {
		f.node.ServeHTTP(w, r)
		return
	}
	f.failer.FailNext(kind)
	f.failer.ServeHTTP(w, r)
}

// tronScan is a paywatch core scanning a fake Tron node through the client.
type tronScan struct {
	*paywatchtest.Env
	t     testing.TB
	node  *tronfake.Node
	proxy *faultyNode
	url   string
	usdt  []byte
}

// clientTimeout bounds every call, so that an injected hang ends quickly.
const clientTimeout = 500 * time.Millisecond

// newTronScan starts a fake node with 25 blocks whose times end just
// before the Env's clock, and an Env that scans it with a tron.Client.
func newTronScan(t testing.TB, opts ...paywatchtest.Option) *tronScan {
	t.Helper()
	node := tronfake.New()
	start := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC) // paywatchtest's clock
	if err := node.MineAt(start.Add(-25 * 3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	node.Mine(24)
	proxy := &faultyNode{node: node, failer: tronfake.New()}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	s := &tronScan{t: t, node: node, proxy: proxy, url: srv.URL, usdt: accountOf(t, mainnetUSDT)}
	all := append([]paywatchtest.Option{
		paywatchtest.Only(payment.Tron),
		paywatchtest.WithConfig(func(c *config.Config) {
			c.Methods[payment.USDTTRC20].Contract = mainnetUSDT
		}),
		paywatchtest.WithSource(payment.Tron, s.newClient()),
	}, opts...)
	s.Env = paywatchtest.New(t, all...)
	return s
}

// newClient is a fresh client on the fake (a restarted process has one).
func (s *tronScan) newClient() *tron.Client {
	c, err := tron.New(tron.Config{URL: s.url, USDTContract: mainnetUSDT,
		HTTPClient: &http.Client{Timeout: clientTimeout}})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// mine produces k blocks 3 s apart on the Env's clock (the first carries
// the pending payments), so block times and the service's now agree.
func (s *tronScan) mine(k int) {
	s.t.Helper()
	for range k {
		s.Clock.Advance(3 * time.Second)
		if err := s.node.MineAt(s.Clock.Now()); err != nil {
			s.t.Fatal(err)
		}
	}
}

// key is an intent's 20-byte account.
func (s *tronScan) key(v views.Intent) []byte { return accountOf(s.t, v.Address) }

func accountOf(tb testing.TB, addr string) []byte {
	tb.Helper()
	k, err := tron.ParseAddress(addr)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func (s *tronScan) payTRX(v views.Intent, sun int64) string {
	return s.node.PayTRX(newAccount(), s.key(v), sun, true)
}

func (s *tronScan) payUSDT(v views.Intent, units int64) string {
	return s.node.PayTRC20(s.usdt, newAccount(), s.key(v), big.NewInt(units), true)
}

func (s *tronScan) sync() { s.t.Helper(); s.Sync(payment.Tron) }

func (s *tronScan) cursor() chains.Cursor {
	s.t.Helper()
	c, err := s.Sink.Cursor(context.Background(), payment.Tron)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// mineUntilSolid mines until the block at height is solidified and scans.
func (s *tronScan) mineUntilSolid(height uint64) {
	s.t.Helper()
	for s.node.Solidified() < height {
		s.mine(1)
	}
	s.sync()
}

// solidify mines until the block at height (the intent's payment) is
// solidified, checking that the intent is not paid one block earlier.
func (s *tronScan) solidify(height uint64, id string) {
	s.t.Helper()
	s.mineUntilSolid(height - 1)
	if got := s.Intent(id); got.Status == "paid" {
		s.t.Fatalf("paid while its block %d is above the solidified block %d", height, s.node.Solidified())
	}
	s.mine(1)
	if s.node.Solidified() != height {
		s.t.Fatalf("solidified %d, want %d", s.node.Solidified(), height)
	}
	s.sync()
}

func units(v views.Intent) int64 { return paywatchtest.Units(v.AmountBaseUnits).Int64() }

// live returns the intent's transfers that are not orphaned.
func live(v views.Intent) []views.Transfer {
	var out []views.Transfer
	for _, t := range v.Transfers {
		if t.Status != "orphaned" {
			out = append(out, t)
		}
	}
	return out
}

func TestScanTronExactDetectedThenPaidAtSolidified(t *testing.T) {
	s := newTronScan(t)
	for _, method := range []string{"TRX", "USDT-TRC20"} {
		{
			v := s.CreateIntent("order", "TRON-EXACT-"+method, "", "10.00", method)
			want := map[string]string{"TRX": "40000000", "USDT-TRC20": "10000000"}[method]
			if v.AmountBaseUnits != want || v.ConfirmationsRequired != 0 {
				t.Fatalf("intent: amount %s confirmations %d, want %s at the solidified block", v.AmountBaseUnits, v.ConfirmationsRequired, want)
			}
			var txid string
			if method == "TRX" {
				txid = s.payTRX(v, units(v))
			} else {
				txid = s.payUSDT(v, units(v))
			}
			s.mine(1)
			h := s.node.Tip()
			s.sync()
			got := s.Intent(v.ID)
			if got.Status != "detected" || len(got.Transfers) != 1 {
				t.Fatalf("after its block: %s %+v", got.Status, got.Transfers)
			}
			tr := got.Transfers[0]
			if tr.TxID != txid || tr.AmountBaseUnits != want || tr.BlockHeight == nil || uint64(*tr.BlockHeight) != h ||
				tr.Status != "confirming" || tr.Address != v.Address {
				t.Fatalf("transfer %+v, want %s of %s in block %d", tr, txid, want, h)
			}
			if method == "TRX" && tr.Index != chains.NativeIndex || method != "TRX" && tr.Index != 0 {
				t.Fatalf("transfer index %d", tr.Index)
			}
			s.solidify(h, v.ID)
			got = s.Intent(v.ID)
			if got.Status != "paid" || got.PaidUSD != "10.00" || len(got.Transfers) != 1 ||
				got.Transfers[0].Classification != "settles" || got.Transfers[0].Status != "confirmed" {
				t.Fatalf("after solidified: %+v", got)
			}
		}
	}
}

func TestScanTronUnderpaidAfterDeadline(t *testing.T) {
	s := newTronScan(t)
	v := s.CreateIntent("order", "TRON-UNDER", "", "10.00", "USDT-TRC20")
	s.payUSDT(v, units(v)-1)
	s.mine(1)
	h := s.node.Tip()
	s.sync()
	s.solidify(h, v.ID)
	got := s.Intent(v.ID)
	if got.Status != "detected" || got.ReceivedBaseUnits != "9999999" || got.Transfers[0].Classification != "partial" {
		t.Fatalf("underpaid before the deadline: %+v", got)
	}
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.Intent(v.ID); got.Status != "underpaid" || got.PaidAt != nil {
		t.Fatalf("after the deadline: %s, want underpaid", got.Status)
	}
}

func TestScanTronLatePayment(t *testing.T) {
	s := newTronScan(t)
	v := s.CreateIntent("order", "TRON-LATE", "", "10.00", "TRX")
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.Intent(v.ID); got.Status != "expired" {
		t.Fatalf("status %s, want expired", got.Status)
	}
	s.payTRX(v, units(v))
	s.mine(1) // block time after the deadline
	h := s.node.Tip()
	s.sync()
	s.solidify(h, v.ID)
	got := s.Intent(v.ID)
	if got.Status != "expired" || !got.Late || len(got.Transfers) != 1 || got.Transfers[0].Classification != "late" {
		t.Fatalf("late payment: %s late=%v %+v", got.Status, got.Late, got.Transfers)
	}
}

func TestScanTronDuplicatePayment(t *testing.T) {
	s := newTronScan(t)
	v := s.CreateIntent("topup", "TRON-DUP", "cust-tron", "100.00", "USDT-TRC20")
	s.payUSDT(v, units(v))
	s.mine(1)
	s.sync()
	s.solidify(s.node.Tip(), v.ID)
	if got := s.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("first payment: %s", got.Status)
	}
	before := s.Counts()
	s.payUSDT(v, units(v))
	s.mine(1)
	s.mineUntilSolid(s.node.Tip())
	got := s.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" {
		t.Fatalf("after the duplicate: %s %+v", got.Status, got.Transfers)
	}
	after := s.Counts()
	if after["ledger_entries"] != before["ledger_entries"] || after["ledger_entries"] != 1 || after["transfers"] != before["transfers"]+1 {
		t.Fatalf("counts before %v after %v: the top-up must be credited once", before, after)
	}
}

func TestScanTronDustAndWrongAsset(t *testing.T) {
	s := newTronScan(t)
	trx := s.CreateIntent("order", "TRON-DUST-TRX", "", "10.00", "TRX")
	usdt := s.CreateIntent("order", "TRON-DUST-USDT", "", "10.00", "USDT-TRC20")
	wrong := s.CreateIntent("order", "TRON-WRONG", "", "10.00", "USDT-TRC20")
	s.payTRX(trx, 1)   // 1 sun: address poisoning
	s.payUSDT(usdt, 0) // a zero-value TRC-20 transfer
	s.payTRX(wrong, 10_000_000)
	s.mine(1)
	h := s.node.Tip()
	s.sync()
	s.solidify(h, trx.ID)
	for _, c := range []struct {
		v     views.Intent
		class string
		asset string
	}{{trx, "dust", "TRX"}, {usdt, "dust", "USDT"}, {wrong, "wrong_asset", "TRX"}} {
		got := s.Intent(c.v.ID)
		if got.Status != "awaiting_payment" || len(got.Transfers) != 1 || string(got.Transfers[0].Classification) != c.class ||
			got.Transfers[0].Status != "confirmed" || got.ReceivedBaseUnits != "0" {
			t.Fatalf("%s: %s received %s %+v, want awaiting_payment with one %s transfer", c.v.Reference, got.Status,
				got.ReceivedBaseUnits, got.Transfers, c.class)
		}
		if got.Transfers[0].Asset != c.asset {
			t.Fatalf("%s: asset %q, want %s", c.v.Reference, got.Transfers[0].Asset, c.asset)
		}
	}
}

// A reorg above the solidified block drops the block that held the
// payment: the intent goes back to awaiting_payment, the transfer is
// orphaned, and a payment in the new chain pays the intent once.
func TestScanTronReorgDropsPaymentRightAfterDetection(t *testing.T) {
	s := newTronScan(t)
	v := s.CreateIntent("order", "TRON-REORG-1", "", "10.00", "TRX")
	s.payTRX(v, units(v))
	s.mine(1)
	s.sync()
	if got := s.Intent(v.ID); got.Status != "detected" {
		t.Fatalf("before the reorg: %s", got.Status)
	}
	if err := s.node.Reorg(1); err != nil {
		t.Fatal(err)
	}
	s.mine(1)
	s.sync()
	got := s.Intent(v.ID)
	if got.Status != "awaiting_payment" || len(got.Transfers) != 1 || got.Transfers[0].Status != "orphaned" || got.ReceivedBaseUnits != "0" {
		t.Fatalf("after the reorg: %s %+v", got.Status, got.Transfers)
	}
	txid := s.payTRX(v, units(v))
	s.mine(1)
	h := s.node.Tip()
	s.sync()
	s.solidify(h, v.ID)
	got = s.Intent(v.ID)
	if l := live(got); got.Status != "paid" || len(l) != 1 || l[0].TxID != txid || l[0].Classification != "settles" {
		t.Fatalf("paid again in the new chain: %s %+v", got.Status, got.Transfers)
	}
}

// A payment already several blocks deep, detected but not yet solidified,
// is dropped by a deeper reorg; a reorg that only replaces blocks above it
// leaves it detected, and it is paid once solidified.
func TestScanTronReorgBeforeSolidified(t *testing.T) {
	s := newTronScan(t)
	dropped := s.CreateIntent("order", "TRON-REORG-DEEP", "", "10.00", "USDT-TRC20")
	kept := s.CreateIntent("order", "TRON-REORG-KEPT", "", "10.00", "TRX")
	s.payTRX(kept, units(kept))
	s.mine(1)
	keptAt := s.node.Tip()
	s.payUSDT(dropped, units(dropped))
	s.mine(1)
	droppedAt := s.node.Tip()
	s.mine(10)
	s.sync()
	for _, v := range []views.Intent{dropped, kept} {
		if got := s.Intent(v.ID); got.Status != "detected" {
			t.Fatalf("%s before the reorg: %s", v.Reference, got.Status)
		}
	}
	if s.node.Solidified() >= droppedAt {
		t.Fatalf("solidified %d: the payment block %d must be above it", s.node.Solidified(), droppedAt)
	}
	if err := s.node.Reorg(int(s.node.Tip() - droppedAt + 1)); err != nil {
		t.Fatal(err)
	}
	s.mine(1)
	s.sync()
	if got := s.Intent(dropped.ID); got.Status != "awaiting_payment" || got.Transfers[0].Status != "orphaned" {
		t.Fatalf("dropped payment: %s %+v", got.Status, got.Transfers)
	}
	if got := s.Intent(kept.ID); got.Status != "detected" || got.Transfers[0].Status != "confirming" ||
		uint64(*got.Transfers[0].BlockHeight) != keptAt {
		t.Fatalf("payment below the reorg: %s %+v", got.Status, got.Transfers)
	}
	s.mineUntilSolid(droppedAt + 1) // past both heights
	if got := s.Intent(kept.ID); got.Status != "paid" {
		t.Fatalf("kept payment once solidified: %s", got.Status)
	}
	if got := s.Intent(dropped.ID); got.Status != "awaiting_payment" {
		t.Fatalf("dropped payment once solidified: %s", got.Status)
	}
	// The node refuses to rewrite the solidified chain, as Tron never does.
	if err := s.node.Reorg(int(s.node.Tip()-s.node.Solidified()) + 1); !errors.Is(err, tronfake.ErrBelowSolidified) {
		t.Fatalf("reorg below the solidified block: %v", err)
	}
}

// A scanner replaced half-way through a catch-up (a restart: new process,
// new client, same database) records every payment once.
func TestScanTronRestartMidScan(t *testing.T) {
	s := newTronScan(t)
	var vs []views.Intent
	var txids []string
	for i := range 6 {
		method := []string{"TRX", "USDT-TRC20"}[i%2]
		v := s.CreateIntent("order", "TRON-RESTART-"+string(rune('A'+i)), "", "10.00", method)
		vs = append(vs, v)
		if method == "TRX" {
			txids = append(txids, s.payTRX(v, units(v)))
		} else {
			txids = append(txids, s.payUSDT(v, units(v)))
		}
		s.mine(3)
	}
	start := s.cursor().Height
	// A step whose context dies mid-fetch applies nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Scanners[payment.Tron].Step(ctx); err == nil {
		t.Fatal("a step with a dead context succeeded")
	}
	if c := s.cursor(); c.Height != start {
		t.Fatalf("cursor moved to %d on a failed step, want %d", c.Height, start)
	}
	// One step applies a first batch (Parallel blocks), then the process dies.
	if _, err := s.Scanners[payment.Tron].Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	mid := s.cursor().Height
	if mid <= start || uint64(mid) >= s.node.Tip() {
		t.Fatalf("cursor %d after one step from %d: want a partial catch-up below %d", mid, start, s.node.Tip())
	}
	s.Scanners[payment.Tron] = s.NewScanner(payment.Tron, s.newClient())
	s.sync()
	if c := s.cursor(); uint64(c.Height) != s.node.Tip() || c.Hash != s.node.BlockID(s.node.Tip()) {
		t.Fatalf("cursor %d %s, want the head %d %s", c.Height, c.Hash, s.node.Tip(), s.node.BlockID(s.node.Tip()))
	}
	// A rescan replays the blocks: still nothing twice.
	s.Scanners[payment.Tron] = s.NewScanner(payment.Tron, s.newClient())
	if err := s.Sink.Reset(context.Background(), payment.Tron, start, s.node.BlockID(uint64(start))); err != nil {
		t.Fatal(err)
	}
	s.sync()
	for i, v := range vs {
		got := s.Intent(v.ID)
		if got.Status != "detected" || len(got.Transfers) != 1 || got.Transfers[0].TxID != txids[i] {
			t.Fatalf("%s: %s %+v, want detected by %s once", v.Reference, got.Status, got.Transfers, txids[i])
		}
	}
	if n := s.Counts()["transfers"]; n != int64(len(vs)) {
		t.Fatalf("%d transfers recorded, want %d", n, len(vs))
	}
	s.mineUntilSolid(s.node.Tip())
	for _, v := range vs {
		if got := s.Intent(v.ID); got.Status != "paid" {
			t.Fatalf("%s: %s after solidified", v.Reference, got.Status)
		}
	}
}

// Every failure the fake injects makes the step fail with a clear error:
// at the tip, the cursor does not move; at a block (or its transaction
// infos) in the middle of a parallel batch, the cursor stays below it; the
// next step recovers, no height is skipped and the payment in the failed
// block is recorded once.
func TestScanTronNodeErrors(t *testing.T) {
	s := newTronScan(t)
	kinds := []struct {
		kind tronfake.Failure
		want error
	}{
		{tronfake.FailErrorBody, tron.ErrNodeError},
		{tronfake.FailBusy, tron.ErrTransient},
		{tronfake.FailLite, tron.ErrLiteNode},
		{tronfake.Fail429, tron.ErrTransient},
		{tronfake.Fail500, tron.ErrTransient},
		{tronfake.FailGarbage, chains.ErrInvalidResponse},
		{tronfake.FailTimeout, tron.ErrTransient},
	}
	sc := func() *chains.Scanner { return s.Scanners[payment.Tron] }
	ctx := context.Background()
	first := s.cursor().Height
	for i, k := range kinds {
		for _, where := range []string{"/wallet/getnowblock", "/wallet/getblockbynum", "/wallet/gettransactioninfobyblocknum"} {
			name := string(k.kind) + where[strings.LastIndex(where, "/"):]
			{
				v := s.CreateIntent("order", "TRON-FAIL-"+name, "", "10.00", []string{"TRX", "USDT-TRC20"}[i%2])
				s.mine(1)
				if v.Method == "TRX" {
					s.payTRX(v, units(v))
				} else {
					s.payUSDT(v, units(v))
				}
				if where == "/wallet/gettransactioninfobyblocknum" {
					s.payUSDT(v, 1_000_000) // a contract runs: the infos are fetched
				}
				s.mine(1)
				target := s.node.Tip()
				s.mine(2) // the failed block sits inside a batch of 4
				before := s.cursor()
				num := int64(target)
				if where == "/wallet/getnowblock" {
					num = -1
				}
				s.proxy.arm(where, num, k.kind)
				fired := s.proxy.fired()
				_, err := sc().Step(ctx)
				if s.proxy.fired() != fired+1 {
					t.Fatalf("%s: the failure was not served", name)
				}
				if !errors.Is(err, k.want) {
					t.Fatalf("%s: step error %v, want %v", name, err, k.want)
				}
				after := s.cursor()
				switch {
				case where == "/wallet/getnowblock" && after != before:
					t.Fatalf("%s: cursor moved from %+v to %+v on a failed tip", name, before, after)
				case after.Height >= chains.Height(target):
					t.Fatalf("%s: cursor %d passed the failed block %d", name, after.Height, target)
				case where != "/wallet/getnowblock" && !strings.Contains(err.Error(), "block "+itoa(target)):
					t.Fatalf("%s: error %q does not name block %d", name, err, target)
				}
				s.sync()
				got := s.Intent(v.ID)
				if got.Status != "detected" || len(got.Transfers) < 1 || uint64(*got.Transfers[0].BlockHeight) > target {
					t.Fatalf("%s: after recovery: %s %+v", name, got.Status, got.Transfers)
				}
			}
		}
	}
	// No height was skipped: every block from the first cursor to the head
	// is stored with the node's hash.
	for h := first; h <= chains.Height(s.node.Tip()); h++ {
		hash, err := s.Sink.BlockHash(ctx, payment.Tron, h)
		if err != nil || hash != s.node.BlockID(uint64(h)) {
			t.Fatalf("stored block %d: %q %v, node %s", h, hash, err, s.node.BlockID(uint64(h)))
		}
	}
	if n := s.Counts()["transfers"]; n != int64(len(kinds)*4) {
		t.Fatalf("%d transfers recorded, want %d (each once)", n, len(kinds)*4)
	}
}

func itoa(n uint64) string { return big.NewInt(0).SetUint64(n).String() }

// BenchmarkScanTronApply is the end-to-end cost of one block: the scanner
// fetches it from the fake over loopback HTTP (Parallel 4), decodes it, and
// applies it in one PostgreSQL transaction through the intents service.
// "empty" blocks hold no transfer of ours; "payment" blocks hold one USDT
// TRC-20 payment each to its own intent (transaction infos fetched, transfer
// recorded, matcher, intent update and event).
//
//	go test -run '^$' -bench ScanTronApply -benchtime 300x ./chains/tron/
func BenchmarkScanTronApply(b *testing.B) {
	for _, kind := range []string{"empty", "payment"} {
		b.Run(kind, func(b *testing.B) {
			s := newTronScan(b)
			var vs []views.Intent
			if kind == "payment" {
				for i := range b.N {
					vs = append(vs, s.CreateIntent("order", "BENCH-"+itoa(uint64(i)), "", "10.00", "USDT-TRC20"))
				}
			}
			for i := range b.N {
				if kind == "payment" {
					s.payUSDT(vs[i], units(vs[i]))
				}
				s.mine(1)
			}
			start := s.Counts()["transfers"]
			b.ResetTimer()
			s.sync()
			b.StopTimer()
			if c := s.cursor(); uint64(c.Height) != s.node.Tip() {
				b.Fatalf("cursor %d, tip %d", c.Height, s.node.Tip())
			}
			if n := s.Counts()["transfers"] - start; kind == "payment" && n != int64(b.N) {
				b.Fatalf("%d transfers recorded, want %d", n, b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/block")
		})
	}
}
