package chains_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

func count(t *testing.T, e *paywatchtest.Env, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.Store.Pool().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func cursorHeight(t *testing.T, e *paywatchtest.Env, n payment.Network) int64 {
	t.Helper()
	return count(t, e, "SELECT height FROM cursors WHERE network = $1", string(n))
}

func TestReorgBeforeConfirmationThenReminedPays(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-R1", "", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "r1")
	e.Sync(payment.Bitcoin)
	if got := e.Intent(v.ID); got.Status != "detected" {
		t.Fatalf("status %s, want detected", got.Status)
	}
	// The block is replaced; its transaction goes back to the mempool.
	f.Reorg(1, 1, true)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "detected" || got.Transfers[0].Status != "pending" {
		t.Fatalf("after reorg: %s / %s, want detected with the transfer back in the mempool", got.Status, got.Transfers[0].Status)
	}
	f.Mine(2)
	e.Sync(payment.Bitcoin)
	got = e.Intent(v.ID)
	if got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].Classification != "settles" {
		t.Fatalf("after re-mining: %+v", got)
	}
}

func TestReorgAfterPaidRevertsAndReversesTopup(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("topup", "TOP-R2", "cust-r2", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "r2")
	f.Mine(1)
	e.Sync(payment.Bitcoin)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("status %s, want paid", got.Status)
	}
	if n := count(t, e, "SELECT balance_cents FROM accounts WHERE account = 'cust-r2'"); n != 10000 {
		t.Fatalf("balance %d cents, want 10000", n)
	}
	// A 3-block reorg drops the payment for good (it never comes back).
	f.Reorg(3, 1, false)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "reverted" || got.Transfers[0].Status != "orphaned" || got.Transfers[0].Classification != "reverted" {
		t.Fatalf("after deep-enough reorg: %s %+v", got.Status, got.Transfers)
	}
	if n := count(t, e, "SELECT balance_cents FROM accounts WHERE account = 'cust-r2'"); n != 0 {
		t.Fatalf("balance %d cents after reversal, want 0", n)
	}
	if n := count(t, e, "SELECT count(*) FROM ledger_entries WHERE intent_id = $1 AND type = 'reversal'", v.ID); n != 1 {
		t.Fatalf("%d reversal entries, want 1", n)
	}
	if n := count(t, e, "SELECT count(*) FROM events WHERE intent_id = $1 AND type = 'intent.reverted'", v.ID); n != 1 {
		t.Fatalf("%d intent.reverted events, want 1", n)
	}
	if n := count(t, e, "SELECT count(*) FROM payables WHERE reference = 'TOP-R2' AND paid_at IS NULL"); n != 1 {
		t.Fatal("the payable is still paid after the revert")
	}
}

func TestDeepReorgIsStickyUntilRescan(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["bitcoin"].SafetyDepth = 2
	}))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-DEEP", "", "100.00", "BTC")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "deep")
	f.Mine(4)
	e.Sync(payment.Bitcoin)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("status %s, want paid", got.Status)
	}
	before := cursorHeight(t, e, payment.Bitcoin)
	f.Reorg(5, 1, false) // replaces the payment's block too
	sc := e.Scanners[payment.Bitcoin]
	_, err := sc.Step(context.Background())
	if !errors.Is(err, chains.ErrDeepReorg) {
		t.Fatalf("step after a 5-block reorg with safety depth 2: %v, want ErrDeepReorg", err)
	}
	if err := e.Sink.SetHealth(context.Background(), payment.Bitcoin, chains.Health{LastError: err.Error(), Critical: err.Error()}); err != nil {
		t.Fatal(err)
	}
	// Sticky: the next steps fail the same way and the cursor does not move.
	if _, err := sc.Step(context.Background()); !errors.Is(err, chains.ErrDeepReorg) {
		t.Fatalf("second step: %v", err)
	}
	if got := cursorHeight(t, e, payment.Bitcoin); got != before {
		t.Fatalf("cursor moved from %d to %d during a deep reorg", before, got)
	}
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-D", "amount_usd": "5.00", "method": "BTC"})
	if st != 503 || !containsAll(string(body), "chain_unavailable", "critical") {
		t.Fatalf("new intent during a critical reorg: %d %s", st, body)
	}
	// The operator rescans from below the fork; scanning resumes.
	if st, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int{"from_height": 1}); st != 202 {
		t.Fatalf("rescan: %d %s", st, body)
	}
	e.Sync(payment.Bitcoin)
	if got := cursorHeight(t, e, payment.Bitcoin); got != int64(f.TipHeight()) {
		t.Fatalf("after rescan cursor %d, want tip %d", got, f.TipHeight())
	}
	// The payment was in a replaced block: the replay orphans it and the
	// intent is reverted, loudly, rather than left paid by a vanished block.
	got := e.Intent(v.ID)
	if got.Status != "reverted" || got.Transfers[0].Status != "orphaned" {
		t.Fatalf("after rescan across the deep reorg: %s %+v", got.Status, got.Transfers)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !contains(s, p) {
			return false
		}
	}
	return true
}

func contains(s, p string) bool {
	for i := 0; i+len(p) <= len(s); i++ {
		if s[i:i+len(p)] == p {
			return true
		}
	}
	return false
}

func TestFetchErrorNeverSkipsAHeight(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Litecoin))
	f := e.Chains[payment.Litecoin]
	v := e.CreateIntent("order", "ORD-F", "", "50.00", "LTC")
	start := cursorHeight(t, e, payment.Litecoin)
	f.Mine(2)
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "f1") // at start+3
	f.Mine(6)
	broken := chains.Height(start + 2)
	f.FailBlock(broken, errors.New("connection reset by peer"))
	sc := e.Scanners[payment.Litecoin]
	for i := 0; i < 5; i++ {
		if _, err := sc.Step(context.Background()); err == nil {
			t.Fatalf("step %d succeeded past a failing height", i)
		}
		if got := cursorHeight(t, e, payment.Litecoin); got >= int64(broken) {
			t.Fatalf("cursor %d passed the failing height %d", got, broken)
		}
	}
	if got := e.Intent(v.ID); got.Status != "awaiting_payment" {
		t.Fatalf("payment above the gap counted before the gap was read: %s", got.Status)
	}
	f.FailBlock(broken, nil)
	e.Sync(payment.Litecoin)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("after recovery: %s, want paid", got.Status)
	}
}

func TestRestartMidCatchUpLosesAndDuplicatesNothing(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum))
	f := e.Chains[payment.Ethereum]
	const n = 12
	var ids []string
	for i := 0; i < n; i++ {
		v := e.CreateIntent("order", "ORD-S"+string(rune('a'+i)), "", "20.00", "ETH")
		ids = append(ids, v.ID)
		e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "s"+string(rune('a'+i)))
	}
	f.Mine(12)
	// A first scanner reads only a few batches, then "crashes".
	first := e.NewScanner(payment.Ethereum, f)
	for i := 0; i < 2; i++ {
		if _, err := first.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mid := count(t, e, "SELECT count(*) FROM transfers")
	if mid == 0 || mid >= n {
		t.Fatalf("%d transfers after two steps; the test needs a partial catch-up", mid)
	}
	// A new scanner (restart) continues from the database cursor. Then a
	// replay of everything (rescan) must change nothing either.
	e.Scanners[payment.Ethereum] = e.NewScanner(payment.Ethereum, f)
	e.Sync(payment.Ethereum)
	events := count(t, e, "SELECT count(*) FROM events")
	if st, _ := e.Do("POST", "/v1/networks/ethereum/rescan", "operator", map[string]int{"from_height": 1}); st != 202 {
		t.Fatal("rescan refused")
	}
	e.Sync(payment.Ethereum)
	if got := count(t, e, "SELECT count(*) FROM transfers"); got != n {
		t.Fatalf("%d transfers, want %d", got, n)
	}
	if got := count(t, e, "SELECT count(*) FROM events"); got != events {
		t.Fatalf("rescan added %d events", got-events)
	}
	for _, id := range ids {
		if got := e.Intent(id); got.Status != "paid" || len(got.Transfers) != 1 {
			t.Fatalf("intent %s: %s with %d transfers", id, got.Status, len(got.Transfers))
		}
	}
}

func TestMempoolTransferVanishingGoesBackToAwaiting(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	v := e.CreateIntent("order", "ORD-M", "", "100.00", "BTC")
	key := addressKey(t, e, v.ID)
	tr := chains.Transfer{TxID: chainstest.TxID("m1"), Index: 0, Asset: payment.Native, Key: key, Address: v.Address,
		Amount: paywatchtest.Units(v.AmountBaseUnits)}
	f.Broadcast(tr)
	e.Sync(payment.Bitcoin)
	got := e.Intent(v.ID)
	if got.Status != "detected" || got.DetectedAt == nil || got.Transfers[0].Status != "pending" {
		t.Fatalf("after broadcast: %+v", got)
	}
	f.Drop(tr.TxID) // replaced by fee (RBF) to another address
	e.Sync(payment.Bitcoin)
	got = e.Intent(v.ID)
	if got.Status != "awaiting_payment" || got.Transfers[0].Status != "orphaned" {
		t.Fatalf("after the mempool transaction vanished: %s %+v", got.Status, got.Transfers)
	}
}

func addressKey(t *testing.T, e *paywatchtest.Env, intentID string) []byte {
	t.Helper()
	var key []byte
	if err := e.Store.Pool().QueryRow(context.Background(), "SELECT address_key FROM intents WHERE id = $1", intentID).Scan(&key); err != nil {
		t.Fatal(err)
	}
	return key
}

func TestNodeDownOrLaggingRefusesNewIntents(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin))
	f := e.Chains[payment.Bitcoin]
	f.FailTip(errors.New("dial tcp 127.0.0.1:18443: connection refused"))
	sc := e.Scanners[payment.Bitcoin]
	_, err := sc.Step(context.Background())
	if err == nil {
		t.Fatal("step with the node down succeeded")
	}
	if err := e.Sink.SetHealth(context.Background(), payment.Bitcoin, chains.Health{LastError: err.Error()}); err != nil {
		t.Fatal(err)
	}
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-N", "amount_usd": "5.00", "method": "BTC"})
	if st != 503 || !containsAll(string(body), "chain_unavailable", "connection refused") {
		t.Fatalf("BTC intent with the node down: %d %s", st, body)
	}
	// Other chains keep working.
	e.CreateIntent("order", "ORD-N2", "", "5.00", "LTC")
	// Node back but far ahead of the scanner: lagging is refused too.
	f.FailTip(nil)
	f.Mine(10)
	if err := e.Sink.ApplyTips(context.Background(), payment.Bitcoin, chains.Tips{Node: f.TipHeight()}); err != nil {
		t.Fatal(err)
	}
	if err := e.Sink.SetHealth(context.Background(), payment.Bitcoin, chains.Health{Healthy: true}); err != nil {
		t.Fatal(err)
	}
	st, body = e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-N3", "amount_usd": "5.00", "method": "BTC"})
	if st != 503 || !containsAll(string(body), "chain_unavailable", "behind") {
		t.Fatalf("BTC intent while lagging: %d %s", st, body)
	}
	e.Sync(payment.Bitcoin)
	e.CreateIntent("order", "ORD-N3", "", "5.00", "BTC")
}

func TestManyPaymentsAcrossParallelCatchUp(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron))
	f := e.Chains[payment.Tron]
	total := new(big.Int)
	for i := 0; i < 30; i++ {
		v := e.CreateIntent("order", fmt.Sprintf("ORD-P%d", i), "", "1.00", "TRX")
		e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), fmt.Sprintf("p%d", i))
		total.Add(total, paywatchtest.Units(v.AmountBaseUnits))
	}
	f.Mine(25) // past the solidified lag
	e.Sync(payment.Tron)
	if got := count(t, e, "SELECT count(*) FROM intents WHERE status = 'paid'"); got != 30 {
		t.Fatalf("%d paid intents, want 30", got)
	}
	var sum string
	if err := e.Store.Pool().QueryRow(context.Background(), "SELECT sum(amount)::text FROM transfers WHERE network = 'tron'").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != total.String() {
		t.Fatalf("transfers sum %s, want %s", sum, total)
	}
}

// lagging serves a chain as a node that is lag blocks behind would: a
// provider behind a load balancer answering from a stale replica.
type lagging struct {
	*chainstest.Fake
	lag chains.Height
}

func (l *lagging) Tip(ctx context.Context) (chains.Height, error) {
	tip, err := l.Fake.Tip(ctx)
	return tip - l.lag, err
}

func (l *lagging) Block(ctx context.Context, h chains.Height, w chains.Watched) (chains.Block, error) {
	tip, _ := l.Tip(ctx)
	if h > tip {
		return chains.Block{}, chains.ErrBlockNotFound
	}
	return l.Fake.Block(ctx, h, w)
}

func (l *lagging) Header(ctx context.Context, h chains.Height) (chains.BlockRef, error) {
	tip, _ := l.Tip(ctx)
	if h > tip {
		return chains.BlockRef{}, chains.ErrBlockNotFound
	}
	return l.Fake.Header(ctx, h)
}

func TestLaggingNodeIsWaitedForNotRewound(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron)) // safety depth 19
	f := e.Chains[payment.Tron]
	v := e.CreateIntent("order", "ORD-LAG", "", "3.00", "TRX")
	e.Pay(v, payment.Native, paywatchtest.Units(v.AmountBaseUnits), "lag")
	f.Mine(30)
	e.Sync(payment.Tron)
	if got := e.Intent(v.ID); got.Status != "paid" {
		t.Fatalf("status %s, want paid", got.Status)
	}
	before := cursorHeight(t, e, payment.Tron)
	stale := e.NewScanner(payment.Tron, &lagging{Fake: f, lag: 25})
	for i := 0; i < 3; i++ {
		if _, err := stale.Step(context.Background()); !errors.Is(err, chains.ErrNodeBehind) {
			t.Fatalf("step against a lagging node: %v, want ErrNodeBehind", err)
		}
	}
	if got := cursorHeight(t, e, payment.Tron); got != before {
		t.Fatalf("cursor moved from %d to %d", before, got)
	}
	if got := e.Intent(v.ID); got.Status != "paid" || got.Transfers[0].Status != "confirmed" {
		t.Fatalf("a lagging node reverted a payment: %s %+v", got.Status, got.Transfers)
	}
	if n := count(t, e, "SELECT count(*) FROM cursors WHERE critical <> ''"); n != 0 {
		t.Fatal("a lagging node raised a critical alert")
	}
	// The node catches up: scanning resumes where it was.
	f.Mine(2)
	e.Sync(payment.Tron)
	if got := cursorHeight(t, e, payment.Tron); got != int64(f.TipHeight()) {
		t.Fatalf("cursor %d, tip %d", got, f.TipHeight())
	}
}

// misnumbered answers the block of height at with its height off by one
// (a node or proxy answering for another height): its parent links it to
// the cursor, so only its height tells.
type misnumbered struct {
	*chainstest.Fake
	at chains.Height
}

func (m *misnumbered) Block(ctx context.Context, h chains.Height, w chains.Watched) (chains.Block, error) {
	b, err := m.Fake.Block(ctx, h, w)
	if err == nil && h == m.at {
		b.Height = h + 1
	}
	return b, err
}

// A block whose height is not the one asked for is an invalid answer: the
// scanner stops at the cursor and never stores a block at a height it is
// not at (issue 21: accepting it passed every test before).
func TestBlockOfAnotherHeightIsRefused(t *testing.T) {
	f := chainstest.NewFake(nil)
	f.Mine(1)
	src := &misnumbered{Fake: f, at: -1}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Litecoin), paywatchtest.WithSource(payment.Litecoin, src))
	v := e.CreateIntent("order", "ORD-MN", "", "50.00", "LTC")
	start := chains.Height(cursorHeight(t, e, payment.Litecoin))
	f.Mine(1)
	key := keyOfIntent(t, e, v)
	f.Send(chainstest.TxID("mn-1"), 0, payment.Native, key, v.Address, paywatchtest.Units(v.AmountBaseUnits))
	f.Mine(8) // the payment at start+2
	src.at = start + 2
	sc := e.Scanners[payment.Litecoin]
	for i := 0; i < 3; i++ {
		_, err := sc.Step(context.Background())
		if !errors.Is(err, chains.ErrInvalidResponse) {
			t.Fatalf("step %d: %v, want ErrInvalidResponse", i, err)
		}
		if got := chains.Height(cursorHeight(t, e, payment.Litecoin)); got >= src.at {
			t.Fatalf("cursor %d at or past the misnumbered block %d", got, src.at)
		}
	}
	if n := count(t, e, `SELECT count(*) FROM transfers`); n != 0 {
		t.Fatalf("%d transfers recorded from a misnumbered block", n)
	}
	src.at = -1
	e.Sync(payment.Litecoin)
	tr := e.Intent(v.ID).Transfers
	if len(tr) != 1 || tr[0].BlockHeight == nil || chains.Height(*tr[0].BlockHeight) != start+2 {
		t.Fatalf("after the node answers right: %+v", tr)
	}
}

func keyOfIntent(t *testing.T, e *paywatchtest.Env, v views.Intent) []byte {
	t.Helper()
	n := payment.Network(v.Network)
	a, err := addresses.ParseAddress(n, e.Config.Networks[n].Chain, v.Address)
	if err != nil {
		t.Fatal(err)
	}
	return a.Key
}
