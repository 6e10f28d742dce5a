package solana_test

// Scenario tests: the solana client (as solana.ModeSource, what the daemon
// scans) pointed at a solanafake cluster over HTTP, scanned by the
// chain-neutral scanner into the intents service, a real PostgreSQL
// database and the HTTP API (paywatchtest), in block mode and in
// address (polling) mode. Solana is simulated here: no real cluster runs in
// these tests. The fake finalizes every slot at once, so an intent goes from
// awaiting_payment to paid in the step that reads its payment.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// faultyCluster serves a solanafake node and, when armed, makes exactly one
// call of method (for slot, or any when slot < 0) fail with code. The
// failure is served by a second fake so no concurrent call can take it.
type faultyCluster struct {
	node, failer *solanafake.Node

	mu     sync.Mutex
	method string
	slot   int64
	code   int
	hits   int
	calls  map[string]int
	// lagging serves getSlot from failer (a node at slot 0): a node behind
	// a load balancer that has not caught up.
	lagging bool
	// sigs, when set, answers every getSignaturesForAddress: a load
	// balancer sending that one method to another node.
	sigs *solanafake.Node
}

func (f *faultyCluster) arm(method string, slot int64, code int) {
	f.mu.Lock()
	f.method, f.slot, f.code = method, slot, code
	f.mu.Unlock()
}

func (f *faultyCluster) fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// count returns how many calls of method the cluster answered.
func (f *faultyCluster) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *faultyCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(body, &req)
	slot := int64(-2)
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params[0], &slot)
	}
	f.mu.Lock()
	lagging := f.lagging && req.Method == "getSlot"
	sigs := f.sigs
	if req.Method != "getSignaturesForAddress" {
		sigs = nil
	}
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[req.Method]++
	hit := f.code != 0 && req.Method == f.method && (f.slot < 0 || f.slot == slot)
	code := f.code
	if hit {
		f.code = 0
		f.hits++
	}
	f.mu.Unlock()
	if lagging {
		f.failer.ServeHTTP(w, r)
		return
	}
	if sigs != nil && !hit {
		sigs.ServeHTTP(w, r)
		return
	}
	if !hit {
		f.node.ServeHTTP(w, r)
		return
	}
	f.failer.FailNext(code)
	f.failer.ServeHTTP(w, r)
}

// solScan is a paywatch core scanning a fake cluster through the client.
type solScan struct {
	*paywatchtest.Env
	t       testing.TB
	node    *solanafake.Node
	cluster *faultyCluster
	url     string
	mode    string
	src     *solana.ModeSource
	payer   [32]byte
}

// newSolScan starts a fake cluster with 11 slots whose times end just
// before the Env's clock and an Env scanning it in mode (block, address
// or auto). The status endpoint reports the mode as the daemon wires it.
func newSolScan(t testing.TB, mode string, opts ...paywatchtest.Option) *solScan {
	t.Helper()
	node := solanafake.New()
	start := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC) // paywatchtest's clock
	if err := node.MineAt(start.Add(-10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	node.Mine(10)
	cluster := &faultyCluster{node: node, failer: solanafake.New()}
	srv := httptest.NewServer(cluster)
	t.Cleanup(srv.Close)
	s := &solScan{t: t, node: node, cluster: cluster, url: srv.URL, mode: mode, payer: [32]byte{7, 7, 7}}
	s.src = s.newSource()
	all := append([]paywatchtest.Option{
		paywatchtest.Only(payment.Solana),
		paywatchtest.WithConfig(func(c *config.Config) { c.Networks["solana"].Mode = mode }),
		paywatchtest.WithSource(payment.Solana, s.src),
	}, opts...)
	s.Env = paywatchtest.New(t, all...)
	s.Nets.Modes = func(n payment.Network) string { // as cmd/paywatch wires it
		if n == payment.Solana {
			return s.src.InUse()
		}
		return ""
	}
	return s
}

// newSource is a fresh client (a restarted process has one, with empty
// address-mode memory).
func (s *solScan) newSource() *solana.ModeSource {
	c, err := solana.New(solana.Config{URL: s.url, Mode: s.mode, HTTPClient: &http.Client{Timeout: 500 * time.Millisecond}})
	if err != nil {
		s.t.Fatal(err)
	}
	return solana.NewModeSource(c)
}

// mine produces k slots with blocks on the Env's clock, 1 s apart (the
// first carries the pending payments).
func (s *solScan) mine(k int) {
	s.t.Helper()
	for range k {
		s.Clock.Advance(time.Second)
		if err := s.node.MineAt(s.Clock.Now()); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *solScan) key(v views.Intent) [32]byte {
	s.t.Helper()
	k, err := sol.PublicKeyFromBase58(v.Address)
	if err != nil {
		s.t.Fatal(err)
	}
	return k
}

func (s *solScan) pay(v views.Intent, lamports uint64) string {
	return s.node.PaySOL(s.payer, s.key(v), lamports, false, false)
}

func (s *solScan) sync() { s.t.Helper(); s.Sync(payment.Solana) }

func (s *solScan) step() error {
	_, err := s.Scanners[payment.Solana].Step(context.Background())
	return err
}

func (s *solScan) cursor() chains.Cursor {
	s.t.Helper()
	c, err := s.Sink.Cursor(context.Background(), payment.Solana)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// importKeys adds n generated keys to the address pool (the harness
// imports 10).
func (s *solScan) importKeys(n int) {
	s.t.Helper()
	keys := make([]string, n)
	for i := range keys {
		k := sha256.Sum256([]byte(fmt.Sprintf("paywatch solana scenario key %d", i)))
		keys[i] = sol.PublicKeyFromBytes(k[:]).String()
	}
	s.ImportSolanaPool(keys...)
}

func lamports(v views.Intent) uint64 { return paywatchtest.Units(v.AmountBaseUnits).Uint64() }

// status returns the Solana entry of GET /v1/status.
func (s *solScan) status() availability.NetworkStatus {
	s.t.Helper()
	code, body := s.Do("GET", "/v1/status", "operator", nil)
	if code != 200 {
		s.t.Fatalf("status: %d %s", code, body)
	}
	var out struct {
		Networks []availability.NetworkStatus `json:"networks"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		s.t.Fatalf("status %s: %v", body, err)
	}
	for _, n := range out.Networks {
		if n.Network == "solana" {
			return n
		}
	}
	s.t.Fatalf("status without solana: %s", body)
	return availability.NetworkStatus{}
}

var modes = []string{solana.ModeBlock, solana.ModeAddress}

func TestScanSolanaExactPaidAtFinalized(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := newSolScan(t, mode)
			v := s.CreateIntent("order", "SOL-EXACT", "", "10.00", "SOL")
			v0 := s.CreateIntent("order", "SOL-EXACT-V0", "", "20.00", "SOL")
			if v.AmountBaseUnits != "50000000" || v.ConfirmationsRequired != 0 {
				t.Fatalf("intent: %s lamports, %d confirmations", v.AmountBaseUnits, v.ConfirmationsRequired)
			}
			sig := s.pay(v, lamports(v))
			sig0 := s.node.PaySOL(s.payer, s.key(v0), lamports(v0), false, true) // recipient through a lookup table
			s.mine(1)
			slot := s.node.Tip()
			s.mine(2)
			s.sync()
			for _, c := range []struct {
				v     views.Intent
				sig   string
				index int64
				usd   string
			}{{v, sig, 1, "10.00"}, {v0, sig0, 2, "20.00"}} {
				got := s.Intent(c.v.ID)
				if got.Status != "paid" || got.PaidUSD != c.usd || got.DetectedAt == nil || len(got.Transfers) != 1 {
					t.Fatalf("%s: %+v", c.v.Reference, got)
				}
				tr := got.Transfers[0]
				if tr.TxID != c.sig || tr.Index != c.index || uint64(*tr.BlockHeight) != slot || tr.Status != "confirmed" ||
					tr.Classification != "settles" || tr.AmountBaseUnits != c.v.AmountBaseUnits || !tr.FirstSeenAt.Equal(s.Clock.Now().Add(-2*time.Second)) {
					t.Fatalf("%s: transfer %+v, want %s index %d in slot %d", c.v.Reference, tr, c.sig, c.index, slot)
				}
			}
			if st := s.status(); st.Mode != mode || uint64(st.ScannedHeight) != s.node.Tip() || !st.Healthy {
				t.Fatalf("status %+v, want mode %s at slot %d", st, mode, s.node.Tip())
			}
		})
	}
}

func TestScanSolanaUnderpaidLateDuplicateDust(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := newSolScan(t, mode)
			under := s.CreateIntent("order", "SOL-UNDER", "", "10.00", "SOL")
			late := s.CreateIntent("order", "SOL-LATE", "", "10.00", "SOL")
			dup := s.CreateIntent("order", "SOL-DUP", "", "10.00", "SOL")
			dust := s.CreateIntent("order", "SOL-DUST", "", "10.00", "SOL")
			s.pay(under, lamports(under)-1)
			s.pay(dup, lamports(dup))
			s.pay(dust, 1)                                                   // below dust_min 0.00001 SOL
			s.node.PaySOL(s.payer, s.key(dust), lamports(dust), true, false) // failed: never counted
			s.mine(1)
			s.sync()
			s.pay(dup, lamports(dup))
			s.mine(1)
			s.sync()
			if got := s.Intent(under.ID); got.Status != "detected" || got.Transfers[0].Classification != "partial" {
				t.Fatalf("underpaid before the deadline: %+v", got)
			}
			if got := s.Intent(dup.ID); got.Status != "paid" || len(got.Transfers) != 2 || got.Transfers[1].Classification != "duplicate" {
				t.Fatalf("duplicate: %s %+v", got.Status, got.Transfers)
			}
			if got := s.Intent(dust.ID); got.Status != "awaiting_payment" || len(got.Transfers) != 1 ||
				got.Transfers[0].Classification != "dust" || got.Transfers[0].AmountBaseUnits != "1" {
				t.Fatalf("dust (and a failed transaction): %s %+v", got.Status, got.Transfers)
			}
			s.Clock.Advance(31 * time.Minute)
			if _, err := s.Service.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := s.Intent(under.ID); got.Status != "underpaid" {
				t.Fatalf("underpaid after the deadline: %s", got.Status)
			}
			if got := s.Intent(late.ID); got.Status != "expired" {
				t.Fatalf("unpaid after the deadline: %s", got.Status)
			}
			s.pay(late, lamports(late))
			s.mine(1) // its block time is after the deadline
			s.sync()
			if got := s.Intent(late.ID); got.Status != "expired" || !got.Late || len(got.Transfers) != 1 || got.Transfers[0].Classification != "late" {
				t.Fatalf("late payment: %s %+v", got.Status, got.Transfers)
			}
			if n := s.Counts()["transfers"]; n != 5 {
				t.Fatalf("%d transfers, want 5 (the failed transaction is not one)", n)
			}
		})
	}
}

// Payments in blocks after skipped slots are found, and the cursor passes
// the skipped slots; a slot a node wrongly reports skipped (-32007 from a
// node that jumped to a snapshot, -32009) is not lost: the next block's
// parent does not match, the scanner stays below and reads it again.
func TestScanSolanaSkippedSlots(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := newSolScan(t, mode)
			a := s.CreateIntent("order", "SOL-SKIP-A", "", "10.00", "SOL")
			b := s.CreateIntent("order", "SOL-SKIP-B", "", "10.00", "SOL")
			s.node.Skip(3)
			s.pay(a, lamports(a))
			s.mine(1)
			slotA := s.node.Tip()
			s.node.Skip(5)
			s.pay(b, lamports(b))
			s.mine(1)
			slotB := s.node.Tip()
			s.node.Skip(2)
			s.mine(1)
			s.sync()
			for v, slot := range map[string]uint64{a.ID: slotA, b.ID: slotB} {
				got := s.Intent(v)
				if got.Status != "paid" || len(got.Transfers) != 1 || uint64(*got.Transfers[0].BlockHeight) != slot {
					t.Fatalf("%s: %s %+v, want paid in slot %d", got.Reference, got.Status, got.Transfers, slot)
				}
			}
			if c := s.cursor(); uint64(c.Height) != s.node.Tip() {
				t.Fatalf("cursor %d, want the tip %d", c.Height, s.node.Tip())
			}
			for _, skipped := range []int64{int64(slotA) - 1, int64(slotB) - 1} {
				if h, err := s.Sink.BlockHash(context.Background(), payment.Solana, chains.Height(skipped)); err == nil {
					t.Fatalf("skipped slot %d has a stored block %s", skipped, h)
				}
			}
			if mode != solana.ModeBlock {
				return
			}
			// A real block reported skipped.
			for _, code := range []int{-32007, -32009} {
				c := s.CreateIntent("order", fmt.Sprintf("SOL-FALSE-SKIP%d", code), "", "10.00", "SOL")
				s.pay(c, lamports(c))
				s.mine(1)
				slotC := s.node.Tip()
				s.mine(1)
				before := s.cursor()
				s.cluster.arm("getBlock", int64(slotC), code)
				// getBlocks lists the slot: the node is faulty, the step fails
				// (the network reports unhealthy) and is retried.
				if err := s.step(); !errors.Is(err, solana.ErrFaultySkip) {
					t.Fatalf("%d: step: %v, want ErrFaultySkip", code, err)
				}
				if s.cluster.fired() == 0 {
					t.Fatalf("%d: the failure was not served", code)
				}
				if c := s.cursor(); c.Height != before.Height {
					t.Fatalf("%d: cursor moved from %d to %d past a block reported skipped", code, before.Height, c.Height)
				}
				s.sync()
				if got := s.Intent(c.ID); got.Status != "paid" || uint64(*got.Transfers[0].BlockHeight) != slotC {
					t.Fatalf("%d: payment in a block reported skipped: %s %+v", code, got.Status, got.Transfers)
				}
			}
		})
	}
}

// A scanner replaced half-way (a restart: new process, new client with an
// empty address-mode memory, same database) records every payment once.
func TestScanSolanaRestartMidScan(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := newSolScan(t, mode)
			var vs []views.Intent
			for i := range 6 {
				v := s.CreateIntent("order", fmt.Sprintf("SOL-RESTART-%d", i), "", "10.00", "SOL")
				vs = append(vs, v)
				s.pay(v, lamports(v))
				s.mine(1)
				s.node.Skip(i % 2)
				s.mine(1)
			}
			start := s.cursor().Height
			// In block mode one step applies Parallel slots; in address
			// mode the first half is scanned and the second half paid after.
			if mode == solana.ModeBlock {
				if err := s.step(); err != nil {
					t.Fatal(err)
				}
				if mid := s.cursor().Height; mid <= start || uint64(mid) >= s.node.Tip() {
					t.Fatalf("cursor %d after one step from %d: want a partial catch-up below %d", mid, start, s.node.Tip())
				}
			} else {
				s.sync()
				for i := range 3 {
					v := s.CreateIntent("order", fmt.Sprintf("SOL-RESTART-LATER-%d", i), "", "10.00", "SOL")
					vs = append(vs, v)
					s.pay(v, lamports(v))
					s.mine(2)
				}
			}
			s.src = s.newSource()
			s.Scanners[payment.Solana] = s.NewScanner(payment.Solana, s.src)
			reads := s.cluster.count("getTransaction")
			s.sync()
			if d := s.cluster.count("getTransaction") - reads; mode == solana.ModeAddress && d != 3 {
				t.Fatalf("%d transactions read after the restart, want the 3 above the cursor", d)
			}
			for _, v := range vs {
				if got := s.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 {
					t.Fatalf("%s: %s %+v, want paid once", v.Reference, got.Status, got.Transfers)
				}
			}
			if n := s.Counts()["transfers"]; n != int64(len(vs)) {
				t.Fatalf("%d transfers recorded, want %d", n, len(vs))
			}
			if c := s.cursor(); uint64(c.Height) != s.node.Tip() {
				t.Fatalf("cursor %d, want %d", c.Height, s.node.Tip())
			}
		})
	}
}

// Every failure the fake injects makes a step fail with a clear error and
// without moving the cursor past what failed; the next step recovers and
// the payment is recorded once.
func TestScanSolanaNodeErrors(t *testing.T) {
	codes := []struct {
		code int
		want error
	}{
		{-32004, solana.ErrTransient},
		{-32014, solana.ErrTransient},
		{-32019, solana.ErrTransient},
		{solanafake.FailHTTP429, solana.ErrTransient},
		{solanafake.FailHTTP500, solana.ErrTransient},
		{solanafake.FailGarbage, chains.ErrInvalidResponse},
		{solanafake.FailHang, solana.ErrTransient},
	}
	where := map[string][]string{
		solana.ModeBlock:   {"getSlot", "getBlock"},
		solana.ModeAddress: {"getSlot", "getSignaturesForAddress", "getTransaction", "getBlock"},
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := newSolScan(t, mode)
			s.importKeys(30)
			first := s.cursor().Height
			payments := 0
			for _, c := range codes {
				for _, method := range where[mode] {
					name := fmt.Sprintf("%d/%s", c.code, method)
					v := s.CreateIntent("order", "SOL-FAIL-"+name, "", "10.00", "SOL")
					s.mine(1)
					s.pay(v, lamports(v))
					payments++
					s.mine(1)
					target := s.node.Tip()
					s.mine(2)
					before := s.cursor()
					slot := int64(-1)
					if method == "getBlock" {
						slot = int64(target)
					}
					s.cluster.arm(method, slot, c.code)
					fired := s.cluster.fired()
					err := s.step()
					if s.cluster.fired() != fired+1 {
						t.Fatalf("%s: the failure was not served", name)
					}
					if !errors.Is(err, c.want) {
						t.Fatalf("%s: step error %v, want %v", name, err, c.want)
					}
					if after := s.cursor(); after.Height >= chains.Height(target) || (mode == solana.ModeAddress || method == "getSlot") && after != before {
						t.Fatalf("%s: cursor %+v after the failed step, before %+v, failed slot %d", name, after, before, target)
					}
					s.sync()
					if got := s.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 || uint64(*got.Transfers[0].BlockHeight) != target {
						t.Fatalf("%s: after recovery: %s %+v", name, got.Status, got.Transfers)
					}
				}
			}
			if mode == solana.ModeBlock {
				// No slot was skipped: every slot from the first cursor to the tip is stored.
				for h := first; h <= chains.Height(s.node.Tip()); h++ {
					if _, err := s.Sink.BlockHash(context.Background(), payment.Solana, h); err != nil {
						t.Fatalf("slot %d not stored: %v", h, err)
					}
				}
			}
			if n := s.Counts()["transfers"]; n != int64(payments) {
				t.Fatalf("%d transfers, want %d (each once)", n, payments)
			}
		})
	}
}

// Address mode end to end: the watched set (10 pool keys) is polled with
// getSignaturesForAddress and getTransaction; no block is read in full
// after the start; auto mode picks it for a small set; the status shows it.
func TestScanSolanaAddressModeEndToEnd(t *testing.T) {
	s := newSolScan(t, solana.ModeAuto)
	if st := s.status(); st.Mode != solana.ModeAddress {
		t.Fatalf("auto mode with %d keys: status mode %q, want address", st.AddressesWatched, st.Mode)
	}
	v := s.CreateIntent("topup", "SOL-POLL", "cust-sol", "100.00", "SOL")
	sig := s.pay(v, lamports(v))
	s.mine(1)
	slot := s.node.Tip()
	s.node.Skip(4)
	s.mine(50)
	blocks, sigs := s.cluster.count("getBlock"), s.cluster.count("getSignaturesForAddress")
	s.sync()
	got := s.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].TxID != sig || uint64(*got.Transfers[0].BlockHeight) != slot {
		t.Fatalf("polled payment: %s %+v", got.Status, got.Transfers)
	}
	if n := s.Counts()["ledger_entries"]; n != 1 {
		t.Fatalf("%d ledger entries, want the top-up credited once", n)
	}
	// One poll of the 10 keys, and two block headers (the payment's slot and
	// the tip) for 55 slots, instead of 51 full blocks.
	if d := s.cluster.count("getSignaturesForAddress") - sigs; d != 10 {
		t.Fatalf("%d getSignaturesForAddress calls, want 10", d)
	}
	if d := s.cluster.count("getBlock") - blocks; d != 2 {
		t.Fatalf("%d getBlock calls for 55 slots, want 2 headers", d)
	}
	if c := s.cursor(); uint64(c.Height) != s.node.Tip() {
		t.Fatalf("cursor %d, want %d", c.Height, s.node.Tip())
	}
	if st := s.status(); st.Mode != solana.ModeAddress || uint64(st.ScannedHeight) != s.node.Tip() {
		t.Fatalf("status %+v", st)
	}
	// Auto with a threshold below the watched set's size reads blocks.
	c, err := solana.New(solana.Config{URL: s.url, Mode: solana.ModeAuto, AddressModeMax: 5})
	if err != nil {
		t.Fatal(err)
	}
	s.src = solana.NewModeSource(c)
	s.Scanners[payment.Solana] = s.NewScanner(payment.Solana, s.src)
	v2 := s.CreateIntent("order", "SOL-BLOCKS", "", "10.00", "SOL")
	s.pay(v2, lamports(v2))
	s.mine(1)
	s.sync()
	if got := s.Intent(v2.ID); got.Status != "paid" {
		t.Fatalf("block mode payment: %s", got.Status)
	}
	if st := s.status(); st.Mode != solana.ModeBlock {
		t.Fatalf("auto mode above the threshold: status mode %q, want block", st.Mode)
	}
}

// BenchmarkScanSolanaApply is the end-to-end cost per slot, each slot
// holding one SOL payment to its own intent: in block mode the scanner reads
// every block over loopback HTTP (getBlock, accounts details, Parallel 4)
// and applies it in one PostgreSQL transaction; in address mode one step
// polls every watched key (getSignaturesForAddress, getTransaction per
// payment, a header per paid slot) and applies the paid slots.
//
//	go test -run '^$' -bench ScanSolanaApply -benchtime 300x ./chains/solana/
func BenchmarkScanSolanaApply(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			s := newSolScan(b, mode)
			s.importKeys(b.N)
			vs := make([]views.Intent, b.N)
			for i := range vs {
				vs[i] = s.CreateIntent("order", fmt.Sprintf("BENCH-%d", i), "", "10.00", "SOL")
			}
			for _, v := range vs {
				s.pay(v, lamports(v))
				s.mine(1)
			}
			start := s.Counts()["transfers"]
			b.ResetTimer()
			s.sync()
			b.StopTimer()
			if c := s.cursor(); uint64(c.Height) != s.node.Tip() {
				b.Fatalf("cursor %d, tip %d", c.Height, s.node.Tip())
			}
			if n := s.Counts()["transfers"] - start; n != int64(b.N) {
				b.Fatalf("%d transfers recorded, want %d", n, b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/slot")
		})
	}
}

// A node behind a load balancer answers a finalized slot below the cursor:
// the tip never moves back, so the scanner neither rewinds nor reports a
// deep reorg (Solana's safety depth is 0); it carries on when the node does.
func TestScanSolanaLaggingNode(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := newSolScan(t, mode)
			v := s.CreateIntent("order", "SOL-LAG", "", "10.00", "SOL")
			s.pay(v, lamports(v))
			s.mine(1)
			s.sync()
			before := s.cursor()
			s.cluster.mu.Lock()
			s.cluster.lagging = true
			s.cluster.mu.Unlock()
			for range 3 {
				if err := s.step(); err != nil {
					t.Fatalf("step with a lagging node: %v", err)
				}
			}
			if c := s.cursor(); c != before {
				t.Fatalf("cursor moved from %+v to %+v", before, c)
			}
			s.cluster.mu.Lock()
			s.cluster.lagging = false
			s.cluster.mu.Unlock()
			s.mine(2)
			s.sync()
			if got := s.Intent(v.ID); got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].Status != "confirmed" {
				t.Fatalf("after the lag: %s %+v", got.Status, got.Transfers)
			}
			if st := s.status(); !st.Healthy || st.Critical != "" || uint64(st.ScannedHeight) != s.node.Tip() {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

// SparseBlocks pages an address's signatures (1,000 per page) only down to
// from, reads only the transactions at or above it, and returns each credit
// once, in slot order, linked from the parent it is given.
func TestSparseBlocksPagesDownToFrom(t *testing.T) {
	node := solanafake.New()
	cluster := &faultyCluster{node: node, failer: solanafake.New()}
	srv := httptest.NewServer(cluster)
	t.Cleanup(srv.Close)
	c, err := solana.New(solana.Config{URL: srv.URL, Mode: solana.ModeAddress})
	if err != nil {
		t.Fatal(err)
	}
	src := solana.NewModeSource(c)
	to := [32]byte{9, 9, 9}
	w := chains.NewWatchSet(1)
	w.Add(to[:])
	for range 3 { // 3 slots of 500 payments each
		for i := range 500 {
			node.PaySOL([32]byte{1, byte(i >> 8), byte(i)}, to, 1_000_000, false, false)
		}
		node.Mine(1)
	}
	node.Mine(1)
	from, tip := chains.Height(2), chains.Height(node.Tip()) // slot 1 lies below the cursor
	if !src.Sparse(w) {
		t.Fatal("address mode not chosen")
	}
	blocks, err := src.SparseBlocks(context.Background(), from, tip, "cursor-hash", w)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].Height != 2 || blocks[1].Height != 3 || blocks[2].Height != tip {
		t.Fatalf("%d blocks, want slots 2, 3 and the tip %d", len(blocks), tip)
	}
	if blocks[0].Parent != "cursor-hash" || blocks[1].Parent != blocks[0].Hash || blocks[2].Parent != blocks[1].Hash {
		t.Fatal("blocks are not linked from the cursor")
	}
	if len(blocks[0].Transfers) != 500 || len(blocks[1].Transfers) != 500 || len(blocks[2].Transfers) != 0 {
		t.Fatalf("transfers per block %d %d %d, want 500 500 0", len(blocks[0].Transfers), len(blocks[1].Transfers), len(blocks[2].Transfers))
	}
	if n := cluster.count("getSignaturesForAddress"); n != 2 {
		t.Fatalf("%d signature pages, want 2 (1,000 then the page reaching below slot %d)", n, from)
	}
	if n := cluster.count("getTransaction"); n != 1000 {
		t.Fatalf("%d transactions read, want the 1,000 at or above slot %d", n, from)
	}
	// The next call (cursor at the old tip, one new empty slot) lists only
	// signatures newer than the last seen and reads no transaction.
	node.Mine(1)
	blocks, err = src.SparseBlocks(context.Background(), tip+1, tip+1, blocks[2].Hash, w)
	if err != nil || len(blocks) != 1 || blocks[0].Height != tip+1 || len(blocks[0].Transfers) != 0 {
		t.Fatalf("one new empty slot: %+v, %v", blocks, err)
	}
	if n, m := cluster.count("getSignaturesForAddress"), cluster.count("getTransaction"); n != 3 || m != 1000 {
		t.Fatalf("%d signature pages and %d transactions in all, want 3 and 1000", n, m)
	}
}
