package bitcoin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// scan drives paywatch end to end against one real regtest node: the
// service, its PostgreSQL database and its HTTP API (paywatchtest.Env), with
// the network's scanner reading the node through a bitcoin.Client.
type scan struct {
	t       *testing.T
	e       *paywatchtest.Env
	n       payment.Network
	method  string
	conf    int
	node    payNode
	src     *bitcoin.Client
	nextRef int
}

// newScan starts the service on an empty database scanning network n from
// src, with conf confirmations for its method.
func newScan(t *testing.T, n payment.Network, method string, conf int, node payNode, src *bitcoin.Client) *scan {
	t.Helper()
	e := paywatchtest.New(t, paywatchtest.Only(n), paywatchtest.WithSource(n, src),
		paywatchtest.WithConfig(func(c *config.Config) { c.Methods[payment.Method(method)].Confirmations = &conf }))
	return &scan{t: t, e: e, n: n, method: method, conf: conf, node: node, src: src}
}

// in points the scan and its Env at subtest t (Env helpers fail the test
// they are given).
func (s *scan) in(t *testing.T) *scan {
	s.t, s.e.T = t, t
	return s
}

func (s *scan) ref() string {
	s.nextRef++
	return fmt.Sprintf("%s-%d", s.method, s.nextRef)
}

func (s *scan) order(usd string) views.Intent {
	s.t.Helper()
	return s.e.CreateIntent("order", s.ref(), "cust-1", usd, s.method)
}

func (s *scan) sync() { s.t.Helper(); s.e.Sync(s.n) }

// step runs one scanner step, as Scanner.Run does, and fails on an error.
func (s *scan) step() bool {
	s.t.Helper()
	done, err := s.e.Scanners[s.n].Step(context.Background())
	if err != nil {
		s.t.Fatalf("step: %v", err)
	}
	if err := s.e.Sink.SetHealth(context.Background(), s.n, chains.Health{Healthy: true}); err != nil {
		s.t.Fatal(err)
	}
	return done
}

func (s *scan) mine(n int) { s.t.Helper(); s.node.Mine(s.t, n); s.sync() }

func (s *scan) pay(address string, amount int64) string {
	s.t.Helper()
	return s.node.Pay(s.t, map[string]int64{address: amount})
}

// settle mines whatever an earlier scenario left in the mempool and scans,
// so that a scenario starts from a quiet chain.
func (s *scan) settle() {
	s.t.Helper()
	if len(s.node.Mempool(s.t)) > 0 {
		s.node.Mine(s.t, 1)
	}
	s.sync()
}

func units(t testing.TB, v views.Intent) int64 {
	t.Helper()
	n, err := strconv.ParseInt(v.AmountBaseUnits, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (s *scan) count(query string, args ...any) int64 {
	s.t.Helper()
	var n int64
	if err := s.e.Store.Pool().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// events returns the types of an intent's events in order.
func (s *scan) events(intentID string) []string {
	s.t.Helper()
	return s.e.IntentEvents(intentID)
}

func countOf(list []string, v string) int {
	n := 0
	for _, x := range list {
		if x == v {
			n++
		}
	}
	return n
}

// payable reads a payable's status through the API.
func (s *scan) payable(kind, ref string) string {
	s.t.Helper()
	status, body := s.e.Do("GET", "/v1/payables/"+kind+"/"+ref, "storefront", nil)
	if status != 200 {
		s.t.Fatalf("payable %s/%s: %d %s", kind, ref, status, body)
	}
	var v struct {
		Status string `json:"status"`
	}
	jsonOf(s.t, body, &v)
	return v.Status
}

// networkStatus reads the network's entry of GET /v1/status.
func (s *scan) networkStatus() availability.NetworkStatus {
	s.t.Helper()
	status, body := s.e.Do("GET", "/v1/status", "operator", nil)
	if status != 200 {
		s.t.Fatalf("status: %d %s", status, body)
	}
	var v struct {
		Networks []availability.NetworkStatus `json:"networks"`
	}
	jsonOf(s.t, body, &v)
	for _, n := range v.Networks {
		if n.Network == string(s.n) {
			return n
		}
	}
	s.t.Fatalf("status has no %s: %s", s.n, body)
	return availability.NetworkStatus{}
}

func (s *scan) cursor() (int64, string) {
	s.t.Helper()
	c, err := s.e.Store.GetCursor(context.Background(), string(s.n))
	if err != nil {
		s.t.Fatal(err)
	}
	return c.Height, c.Hash
}

// totals are the rows that must never be written twice.
func (s *scan) totals() map[string]int64 {
	s.t.Helper()
	c := s.e.Counts()
	return map[string]int64{"transfers": c["transfers"], "events": c["events"], "ledger_entries": c["ledger_entries"]}
}

func (s *scan) want(v views.Intent, status string, transfers int) views.Intent {
	s.t.Helper()
	got := s.e.Intent(v.ID)
	if string(got.Status) != status || len(got.Transfers) != transfers {
		s.t.Fatalf("intent %s: status %s with %d transfers, want %s with %d: %+v", v.ID, got.Status, len(got.Transfers), status, transfers, got)
	}
	return got
}

// scenarios are the payment cases every Bitcoin-like network passes, in
// order, on one node and one database.
var scenarios = []struct {
	name string
	run  func(s *scan)
}{
	{"ExactPaidAfterConfirmations", exactPaid},
	{"MempoolDetection", mempoolDetection},
	{"UnderpaidThenCompleted", underpaidThenCompleted},
	{"Overpaid", overpaid},
	{"Duplicate", duplicate},
	{"OneTransactionTwoIntents", oneTxTwoIntents},
	{"ReorgBeforeConfirmed", reorgBeforeConfirmed},
	{"ReorgAfterPaid", reorgAfterPaid},
	{"ReorgToLongerChain", reorgToLongerChain},
	{"ReorgAtTheSameHeight", reorgSameHeight},
	{"KilledMidCatchUp", killedMidCatchUp},
	{"RescanReplaysWithoutDoubleCounting", rescan},
	{"Status", statusLag},
	{"Late", late},
	{"LookAheadAddress", lookAheadAddress},
}

func runScenarios(t *testing.T, s *scan) {
	for _, sc := range scenarios {
		if !t.Run(sc.name, func(t *testing.T) {
			s := s.in(t)
			s.settle()
			sc.run(s)
		}) {
			break // later scenarios assume a consistent chain and database
		}
	}
}

func exactPaid(s *scan) {
	v := s.order("20.00")
	if v.ConfirmationsRequired != s.conf || v.Status != "awaiting_payment" {
		s.t.Fatalf("created: %+v", v)
	}
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(1)
	for i := 1; i < s.conf; i++ {
		got := s.want(v, "detected", 1)
		tr := got.Transfers[0]
		if tr.TxID != txid || tr.Confirmations != int64(i) || tr.Status != "confirming" {
			s.t.Fatalf("after %d blocks: %+v", i, tr)
		}
		s.mine(1)
	}
	got := s.want(v, "paid", 1)
	tr := got.Transfers[0]
	if tr.Confirmations != int64(s.conf) || tr.Status != "confirmed" || tr.Classification != "settles" ||
		tr.AmountBaseUnits != v.AmountBaseUnits || tr.Address != v.Address || got.Overpaid || got.PaidAt == nil {
		s.t.Fatalf("paid: %+v", got)
	}
	if st := s.payable("order", v.Reference); st != "paid" {
		s.t.Fatalf("payable %s", st)
	}
	if ev := s.events(v.ID); countOf(ev, "intent.paid") != 1 {
		s.t.Fatalf("events %v", ev)
	}
}

func mempoolDetection(s *scan) {
	v := s.order("21.00")
	seen := s.e.Clock.Now()
	txid := s.pay(v.Address, units(s.t, v))
	s.sync() // no block: the mempool
	got := s.want(v, "detected", 1)
	tr := got.Transfers[0]
	if tr.TxID != txid || tr.Status != "pending" || tr.BlockHeight != nil || tr.Confirmations != 0 ||
		!tr.FirstSeenAt.Equal(seen) || got.DetectedAt == nil || !got.DetectedAt.Equal(seen) {
		s.t.Fatalf("from the mempool: %+v", got)
	}
	if ev := s.events(v.ID); !slices.Equal(ev, []string{"intent.created", "intent.detected"}) {
		s.t.Fatalf("events %v", ev)
	}
	s.e.Clock.Advance(2 * time.Minute)
	s.mine(s.conf)
	got = s.want(v, "paid", 1)
	tr = got.Transfers[0]
	if tr.Status != "confirmed" || tr.BlockHeight == nil || !tr.FirstSeenAt.Equal(seen) ||
		!got.DetectedAt.Equal(seen) || !got.PaidAt.Equal(s.e.Clock.Now()) {
		s.t.Fatalf("mined: %+v", got)
	}
}

func underpaidThenCompleted(s *scan) {
	v := s.order("22.00")
	amount := units(s.t, v)
	part := amount / 3
	s.pay(v.Address, part)
	s.mine(s.conf)
	got := s.want(v, "detected", 1)
	if got.ReceivedBaseUnits != strconv.FormatInt(part, 10) || got.Transfers[0].Classification != "partial" ||
		got.Transfers[0].Status != "confirmed" {
		s.t.Fatalf("part paid: %+v", got)
	}
	s.pay(v.Address, amount-part)
	s.mine(s.conf)
	got = s.want(v, "paid", 2)
	for _, tr := range got.Transfers {
		if tr.Classification != "settles" || tr.Status != "confirmed" {
			s.t.Fatalf("completed: %+v", got.Transfers)
		}
	}
	if got.ReceivedBaseUnits != v.AmountBaseUnits || got.Overpaid {
		s.t.Fatalf("completed: %+v", got)
	}
}

func overpaid(s *scan) {
	v := s.order("23.00")
	amount := units(s.t, v)
	extra := amount / 2
	s.pay(v.Address, amount+extra)
	s.mine(s.conf)
	got := s.want(v, "paid", 1)
	received, _ := strconv.ParseInt(got.ReceivedBaseUnits, 10, 64)
	if !got.Overpaid || got.Transfers[0].Classification != "overpaid" || received-amount != extra {
		s.t.Fatalf("overpaid: surplus %d, want %d: %+v", received-amount, extra, got)
	}
	if ev := s.events(v.ID); countOf(ev, "intent.paid") != 1 || countOf(ev, "transfer.unmatched") != 1 {
		s.t.Fatalf("events %v (the surplus goes to finance)", ev)
	}
}

func duplicate(s *scan) {
	v := s.order("24.00")
	amount := units(s.t, v)
	s.pay(v.Address, amount)
	s.mine(s.conf)
	s.want(v, "paid", 1)
	second := s.pay(v.Address, amount)
	s.mine(s.conf)
	got := s.want(v, "paid", 2)
	for _, tr := range got.Transfers {
		want := "settles"
		if tr.TxID == second {
			want = "duplicate"
		}
		if string(tr.Classification) != want || tr.Status != "confirmed" {
			s.t.Fatalf("transfer %s: %s, want %s", tr.TxID, tr.Classification, want)
		}
	}
	if got.ReceivedBaseUnits != v.AmountBaseUnits {
		s.t.Fatalf("received %s", got.ReceivedBaseUnits)
	}
	ev := s.events(v.ID)
	if countOf(ev, "intent.paid") != 1 || countOf(ev, "transfer.unmatched") != 1 {
		s.t.Fatalf("events %v", ev)
	}
}

func oneTxTwoIntents(s *scan) {
	a, b := s.order("25.00"), s.order("26.00")
	txid := s.node.Pay(s.t, map[string]int64{a.Address: units(s.t, a), b.Address: units(s.t, b)})
	s.mine(s.conf)
	ga, gb := s.want(a, "paid", 1), s.want(b, "paid", 1)
	if ga.Transfers[0].TxID != txid || gb.Transfers[0].TxID != txid || ga.Transfers[0].Index == gb.Transfers[0].Index {
		s.t.Fatalf("transfers %+v and %+v", ga.Transfers, gb.Transfers)
	}
	if n := s.count(`SELECT count(*) FROM transfers WHERE txid = $1`, txid); n != 2 {
		s.t.Fatalf("%d transfer rows for %s, want 2", n, txid)
	}
}

func reorgBeforeConfirmed(s *scan) {
	if s.conf < 2 {
		s.t.Skip("needs at least 2 confirmations")
	}
	v := s.order("27.00")
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(1)
	got := s.want(v, "detected", 1)
	height := *got.Transfers[0].BlockHeight
	s.node.Invalidate(s.t, s.node.BlockHash(s.t, height))

	// One step: the node is below the cursor; the scanner walks back to the
	// common ancestor and orphans the payment.
	s.step()
	if h, _ := s.cursor(); h != height-1 {
		s.t.Fatalf("cursor %d after the reorg, want %d", h, height-1)
	}
	got = s.want(v, "awaiting_payment", 1)
	if tr := got.Transfers[0]; tr.Status != "orphaned" || tr.Confirmations != 0 || got.ReceivedBaseUnits != "0" {
		s.t.Fatalf("after the reorg: %+v", got)
	}
	if ev := s.events(v.ID); !slices.Equal(ev, []string{"intent.created", "intent.detected", "intent.awaiting_payment"}) {
		s.t.Fatalf("events %v", ev)
	}
	// The transaction is back in the mempool: detected again, then mined
	// on the new chain and paid. Still one transfer row.
	if !slices.Contains(s.node.Mempool(s.t), txid) {
		s.t.Fatalf("%s is not back in the mempool", txid)
	}
	s.sync()
	if got = s.want(v, "detected", 1); got.Transfers[0].Status != "pending" {
		s.t.Fatalf("back in the mempool: %+v", got.Transfers[0])
	}
	s.mine(s.conf)
	got = s.want(v, "paid", 1)
	if tr := got.Transfers[0]; tr.Status != "confirmed" || tr.TxID != txid || tr.Classification != "settles" {
		s.t.Fatalf("re-mined: %+v", tr)
	}
	if n := s.count(`SELECT count(*) FROM transfers WHERE txid = $1`, txid); n != 1 {
		s.t.Fatalf("%d transfer rows for %s", n, txid)
	}
}

func reorgAfterPaid(s *scan) {
	v := s.e.CreateIntent("topup", s.ref(), "acct-reorg", "100.00", s.method)
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(s.conf)
	got := s.want(v, "paid", 1)
	height := *got.Transfers[0].BlockHeight
	balance := func() int64 {
		return s.count(`SELECT coalesce(sum(CASE type WHEN 'credit' THEN amount_cents ELSE -amount_cents END), 0)
			FROM ledger_entries WHERE account = 'acct-reorg'`)
	}
	if b := balance(); b != 10000 || s.payable("topup", v.Reference) != "paid" {
		s.t.Fatalf("paid: balance %d", b)
	}
	// A reorg replaces every block from the payment's on.
	s.node.Invalidate(s.t, s.node.BlockHash(s.t, height))
	s.step()
	got = s.want(v, "reverted", 1)
	if tr := got.Transfers[0]; tr.Status != "orphaned" || tr.Classification != "reverted" {
		s.t.Fatalf("after the reorg: %+v", tr)
	}
	if st := s.payable("topup", v.Reference); st != "unpaid" {
		s.t.Fatalf("payable %s after the reorg, want unpaid", st)
	}
	ev := s.events(v.ID)
	if countOf(ev, "intent.reverted") != 1 || countOf(ev, "ledger.reversed") != 1 {
		s.t.Fatalf("events %v", ev)
	}
	if b := balance(); b != 0 {
		s.t.Fatalf("balance %d after the reversal", b)
	}
	// The payment is mined again on the new chain: paid (and credited)
	// again, once.
	s.sync()
	s.mine(s.conf)
	got = s.want(v, "paid", 1)
	if got.Transfers[0].TxID != txid || got.Transfers[0].Status != "confirmed" {
		s.t.Fatalf("re-mined: %+v", got.Transfers[0])
	}
	if b := balance(); b != 10000 || s.payable("topup", v.Reference) != "paid" {
		s.t.Fatalf("re-paid: balance %d", b)
	}
	if ev := s.events(v.ID); countOf(ev, "intent.paid") != 2 || countOf(ev, "ledger.credited") != 2 {
		s.t.Fatalf("events %v", ev)
	}
}

// reorgToLongerChain: the block holding a payment is replaced while the
// scanner is away, by a longer chain that mines the payment again at the
// same height in another block. The scanner finds the new chain's parent
// hash does not match, walks back, orphans the payment, and records it
// again in its new block: one transfer row, the new block.
func reorgToLongerChain(s *scan) {
	if s.conf < 3 {
		s.t.Skip("needs at least 3 confirmations")
	}
	v := s.order("28.00")
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(1)
	got := s.want(v, "detected", 1)
	height, old := *got.Transfers[0].BlockHeight, *got.Transfers[0].BlockHash
	s.node.Invalidate(s.t, old)
	s.node.Mine(s.t, 2) // the payment is back in the mempool: mined at height again
	replacement := s.node.BlockHash(s.t, height)
	if replacement == old {
		s.t.Fatalf("block %d was not replaced", height)
	}
	s.sync()
	got = s.want(v, "detected", 1)
	tr := got.Transfers[0]
	if tr.TxID != txid || tr.Status != "confirming" || *tr.BlockHeight != height || *tr.BlockHash != replacement || tr.Confirmations != 2 {
		s.t.Fatalf("after the reorg: %+v (new block %s)", tr, replacement)
	}
	if h, hash := s.cursor(); h != height+1 || hash != s.node.BlockHash(s.t, height+1) {
		s.t.Fatalf("cursor %d %s", h, hash)
	}
	if ev := s.events(v.ID); countOf(ev, "intent.awaiting_payment") != 1 {
		s.t.Fatalf("events %v: the walk-back orphaned nothing", ev)
	}
	s.mine(s.conf - 2)
	if got = s.want(v, "paid", 1); *got.Transfers[0].BlockHash != replacement {
		s.t.Fatalf("paid in %s, want %s", *got.Transfers[0].BlockHash, replacement)
	}
	if n := s.count(`SELECT count(*) FROM transfers WHERE txid = $1`, txid); n != 1 {
		s.t.Fatalf("%d transfer rows for %s", n, txid)
	}
}

// killSink cancels the scanner's context while its kill-th block is being
// applied: the transaction commits or rolls back, as under kill -9.
type killSink struct {
	chains.ChainHandler
	batch  chains.BatchSink
	kill   int
	n      int
	cancel context.CancelFunc
}

func (k *killSink) ApplyBlock(ctx context.Context, n payment.Network, b chains.Block, tips chains.Tips) error {
	k.n++
	if k.n == k.kill {
		time.AfterFunc(300*time.Microsecond, k.cancel)
	}
	return k.ChainHandler.ApplyBlock(ctx, n, b, tips)
}

// ApplyBlocks kills a batch (one transaction) the same way when the sink
// applies catch-up batches at once.
func (k *killSink) ApplyBlocks(ctx context.Context, n payment.Network, bs []chains.Block, tips chains.Tips) error {
	bs0 := k.n
	k.n += len(bs)
	if bs0 < k.kill && k.n >= k.kill {
		time.AfterFunc(300*time.Microsecond, k.cancel)
	}
	if k.batch != nil {
		return k.batch.ApplyBlocks(ctx, n, bs, tips)
	}
	for _, b := range bs {
		if err := k.ChainHandler.ApplyBlock(ctx, n, b, tips); err != nil {
			return err
		}
	}
	return nil
}

func killedMidCatchUp(s *scan) {
	const payments = 6
	var vs []views.Intent
	for i := 0; i < payments; i++ {
		vs = append(vs, s.order(fmt.Sprintf("%d.00", 40+i)))
	}
	start, _ := s.cursor()
	for _, v := range vs { // one payment every other block, scanner away
		s.pay(v.Address, units(s.t, v))
		s.node.Mine(s.t, 2)
	}
	nc := s.e.Config.Networks[s.n]
	// Enough blocks for at least three catch-up windows, and the kill inside
	// the second: whether its transaction commits or rolls back, the cursor
	// ends strictly between the start and the tip.
	s.node.Mine(s.t, s.conf+2*nc.Parallel)
	tip := s.node.Tip(s.t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sinks := s.e.Sink.ScannerSinks()
	kill := &killSink{ChainHandler: sinks.Chain, batch: sinks.Batch, kill: nc.Parallel + 2, cancel: cancel}
	sinks.Chain, sinks.Batch = kill, kill
	sc := chains.NewScanner(chains.ScannerConfig{Network: s.n, Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth},
		s.src, sinks, &ingest.Keys{Store: s.e.Store}, s.e.Watch[s.n], nil)
	var err error
	for err == nil {
		_, err = sc.Step(ctx)
	}
	at, _ := s.cursor()
	if at <= start || at >= tip {
		s.t.Fatalf("killed at %d: not mid catch-up (%d..%d): %v", at, start, tip, err)
	}
	// Whatever the kill interrupted is all there or not at all.
	if n := s.count(`SELECT count(*) FROM transfers WHERE network = $1 AND block_height > $2`, string(s.n), at); n != 0 {
		s.t.Fatalf("%d transfers above the cursor %d after the kill", n, at)
	}
	if n := s.count(`SELECT count(*) FROM blocks WHERE network = $1 AND height > $2`, string(s.n), at); n != 0 {
		s.t.Fatalf("%d blocks above the cursor %d after the kill", n, at)
	}

	// A new scanner over the same database finishes the catch-up.
	s.e.Scanners[s.n] = s.e.NewScanner(s.n, s.src)
	s.sync()
	if h, _ := s.cursor(); h != tip {
		s.t.Fatalf("cursor %d, tip %d", h, tip)
	}
	for _, v := range vs {
		got := s.want(v, "paid", 1)
		if got.Transfers[0].Classification != "settles" {
			s.t.Fatalf("%+v", got.Transfers)
		}
		ev := s.events(v.ID)
		if countOf(ev, "intent.paid") != 1 {
			s.t.Fatalf("intent %s events %v", v.ID, ev)
		}
		for _, typ := range ev {
			if countOf(ev, typ) != 1 {
				s.t.Fatalf("intent %s: %s twice in %v", v.ID, typ, ev)
			}
		}
	}
	if n := s.count(`SELECT count(*) FROM transfers WHERE network = $1 AND block_height > $2`, string(s.n), start); n != payments {
		s.t.Fatalf("%d transfers recorded, want %d", n, payments)
	}
}

func rescan(s *scan) {
	v := s.order("50.00")
	s.pay(v.Address, units(s.t, v))
	s.mine(s.conf + 2)
	got := s.want(v, "paid", 1)
	from := *got.Transfers[0].BlockHeight - 1
	before := s.totals()
	tip, hash := s.cursor()

	s.e.Clock.Advance(time.Second) // replayed rows carry the new time
	status, body := s.e.Do("POST", "/v1/networks/"+string(s.n)+"/rescan", "operator", map[string]int64{"from_height": from})
	if status != 202 {
		s.t.Fatalf("rescan: %d %s", status, body)
	}
	s.sync()
	if h, hh := s.cursor(); h != tip || hh != hash {
		s.t.Fatalf("cursor %d %s after the rescan, want %d %s", h, hh, tip, hash)
	}
	if n := s.count(`SELECT count(*) FROM transfers WHERE intent_id = $1 AND updated_at = $2`, v.ID, s.e.Clock.Now()); n != 1 {
		s.t.Fatal("the rescan did not replay the payment's block")
	}
	if after := s.totals(); fmt.Sprint(after) != fmt.Sprint(before) {
		s.t.Fatalf("rescan changed counts: %v -> %v", before, after)
	}
	if n := s.count(`SELECT count(*) FROM cursors WHERE network = $1 AND rescan_from IS NOT NULL`, string(s.n)); n != 0 {
		s.t.Fatal("rescan request not cleared")
	}
	s.want(v, "paid", 1)
}

func statusLag(s *scan) {
	st := s.networkStatus()
	tip := s.node.Tip(s.t)
	if st.NodeHeight != tip || st.ScannedHeight != tip || st.LagBlocks != 0 || !st.Healthy || st.LastBlockAt == nil {
		s.t.Fatalf("caught up at %d: %+v", tip, st)
	}
	// One block at a time: the status shows the lag.
	s.node.Mine(s.t, 3)
	sc := chains.NewScanner(chains.ScannerConfig{Network: s.n, Parallel: 1, SafetyDepth: 100}, s.src, s.e.Sink.ScannerSinks(),
		&ingest.Keys{Store: s.e.Store}, s.e.Watch[s.n], nil)
	if _, err := sc.Step(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	st = s.networkStatus()
	if st.NodeHeight != tip+3 || st.ScannedHeight != tip+1 || st.LagBlocks != 2 {
		s.t.Fatalf("one block of three scanned: %+v", st)
	}
	s.sync()
	if st = s.networkStatus(); st.ScannedHeight != tip+3 || st.LagBlocks != 0 {
		s.t.Fatalf("caught up: %+v", st)
	}
}

func late(s *scan) {
	v := s.order("60.00")
	s.e.Clock.Set(v.ExpiresAt.Add(time.Minute)) // before the payment
	s.pay(v.Address, units(s.t, v))
	s.sync()
	s.mine(s.conf)
	got := s.want(v, "expired", 1)
	tr := got.Transfers[0]
	if !got.Late || got.PaidAt != nil || tr.Classification != "late" || tr.Status != "confirmed" || !tr.FirstSeenAt.After(v.ExpiresAt) {
		s.t.Fatalf("late: %+v", got)
	}
	if st := s.payable("order", v.Reference); st != "unpaid" {
		s.t.Fatalf("payable %s", st)
	}
	if ev := s.events(v.ID); countOf(ev, "intent.paid") != 0 || countOf(ev, "transfer.unmatched") != 1 {
		s.t.Fatalf("events %v", ev)
	}
}

func lookAheadAddress(s *scan) {
	var addr string
	err := s.e.Store.Pool().QueryRow(context.Background(), `SELECT address FROM addresses
		WHERE network = $1 AND key IN (SELECT key FROM free_addresses WHERE network = $1) ORDER BY derivation_index DESC LIMIT 1`, string(s.n)).Scan(&addr)
	if err != nil {
		s.t.Fatalf("no look-ahead address: %v", err)
	}
	txid := s.pay(addr, 70_000)
	s.mine(s.conf)
	var intentID *string
	var class, status string
	var transferID string
	err = s.e.Store.Pool().QueryRow(context.Background(), `SELECT id, intent_id, classification, status FROM transfers
		WHERE txid = $1 AND address = $2`, txid, addr).Scan(&transferID, &intentID, &class, &status)
	if err != nil {
		s.t.Fatal(err)
	}
	if intentID != nil || class != "unknown_address" || status != "confirmed" {
		s.t.Fatalf("transfer to %s: intent %v, %s, %s", addr, intentID, class, status)
	}
	if n := s.count(`SELECT count(*) FROM events WHERE type = 'transfer.unmatched' AND transfer_id = $1`, transferID); n != 1 {
		s.t.Fatalf("%d transfer.unmatched events", n)
	}
}

func TestScanBitcoin(t *testing.T) {
	node := startBtcd(t)
	proxy := startProxy(t, fmt.Sprintf("127.0.0.1:%d", node.node.RPCPort))
	src := newClient(t, payment.Bitcoin, proxy.URL(node.node.RPCURL), true)
	s := newScan(t, payment.Bitcoin, "BTC", 3, node, src)
	runScenarios(t, s)
	t.Run("NodeUnreachable", func(t *testing.T) {
		s := s.in(t)
		nodeDown(s, proxy.Cut, func() { proxy.Restore(t) })
	})
}

func TestScanLitecoin(t *testing.T) {
	node := startLitecoind(t, true)
	src := newClient(t, payment.Litecoin, node.node.RPCURL, false)
	s := newScan(t, payment.Litecoin, "LTC", 4, node, src)
	runScenarios(t, s)
	if t.Failed() {
		return
	}
	t.Run("MempoolReplaced", func(t *testing.T) { mempoolReplaced(s.in(t), node) })
	t.Run("ReplacedByEmptyBlock", func(t *testing.T) { replacedByEmptyBlock(s.in(t), node) })
	t.Run("NodeRestarted", func(t *testing.T) {
		s := s.in(t)
		nodeDown(s, node.Stop, func() { node.Start(t) })
	})
	t.Run("MWEB", func(t *testing.T) { mweb(s.in(t), node) })
}

// nodeDown runs the scanner (Scanner.Run) while the node goes away: the
// scanner reports errors, its cursor stays, intents are refused; when the
// node is back it catches up.
func nodeDown(s *scan, down, up func()) {
	v := s.order("80.00")
	ctx, cancel := context.WithCancel(context.Background())
	nc := s.e.Config.Networks[s.n]
	sc := chains.NewScanner(chains.ScannerConfig{Network: s.n, PollInterval: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth}, s.src, s.e.Sink.ScannerSinks(), &ingest.Keys{Store: s.e.Store}, s.e.Watch[s.n], nil)
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor := func(what string, ok func(availability.NetworkStatus) bool) availability.NetworkStatus {
		s.t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			st := s.networkStatus()
			if ok(st) {
				return st
			}
			if time.Now().After(deadline) {
				s.t.Fatalf("%s: status %+v", what, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	at, hash := s.cursor()
	down()
	st := waitFor("unhealthy", func(st availability.NetworkStatus) bool { return !st.Healthy && st.LastError != "" })
	if st.ScannedHeight != at {
		s.t.Fatalf("scanned height %d while the node is down, was %d", st.ScannedHeight, at)
	}
	status, body := s.e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": s.ref(), "account": "cust-1", "amount_usd": "81.00", "method": s.method})
	if status != 503 || !json503(body, "chain_unavailable") {
		s.t.Fatalf("intent while the node is down: %d %s", status, body)
	}
	if h, hh := s.cursor(); h != at || hh != hash {
		s.t.Fatalf("cursor moved to %d %s while the node was down", h, hh)
	}
	up()
	s.pay(v.Address, units(s.t, v))
	s.node.Mine(s.t, s.conf+1)
	tip := s.node.Tip(s.t)
	waitFor("caught up", func(st availability.NetworkStatus) bool {
		return st.Healthy && st.ScannedHeight == tip && st.NodeHeight == tip
	})
	deadline := time.Now().Add(30 * time.Second)
	for s.e.Intent(v.ID).Status != "paid" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.want(v, "paid", 1)
}

func json503(body []byte, code string) bool {
	var v struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &v) == nil && v.Error.Code == code
}
