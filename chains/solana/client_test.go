package solana

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/payment"
)

// chain drives the fake for the conformance suite.
type chain struct {
	f     *fake
	payer [32]byte
}

func (c *chain) Source() chains.Source { return c.f.client }

func (c *chain) NewAddress(t *testing.T) ([]byte, string) {
	k := newKey(t)
	return k[:], sol.PublicKeyFromBytes(k[:]).String()
}

func (c *chain) Pay(t *testing.T, address string, asset payment.Asset, amount *big.Int) string {
	if asset != payment.Native || !amount.IsUint64() {
		t.Fatalf("cannot pay %s %s", amount, asset)
	}
	to := sol.MustPublicKeyFromBase58(address)
	sig := c.f.node.PaySOL(c.payer, to, amount.Uint64(), false, false)
	c.f.node.Mine(1)
	return sig
}

func (c *chain) Mine(t *testing.T, n int)      { c.f.node.Mine(n) }
func (c *chain) Reorg(t *testing.T, depth int) { c.f.node.Reorg(depth) }
func (c *chain) Asset() payment.Asset          { return payment.Native }
func (c *chain) Amount() *big.Int              { return big.NewInt(1_234_567) }

func TestConformance(t *testing.T) {
	chainstest.Run(t, &chain{f: newFake(t, Config{}), payer: newKey(t)})
}

// Skipped slots are ErrSkipped, absent from Slots, and the block after a gap
// names the block before it as parent.
func TestSkippedSlots(t *testing.T) {
	f := newFake(t, Config{})
	f.node.Mine(2)
	before := f.node.Tip()
	f.node.Skip(3)
	f.node.Mine(1)
	after := f.node.Tip()

	for s := before + 1; s < after; s++ {
		_, err := f.client.Block(ctx(t), chains.Height(s), keySet{})
		if !errors.Is(err, chains.ErrSkipped) || errors.Is(err, ErrTransient) {
			t.Fatalf("Block(%d) = %v, want ErrSkipped only", s, err)
		}
		want := fmt.Sprintf("Slot %d was skipped, or missing due to ledger jump to recent snapshot", s)
		var rpcErr *RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32007 || rpcErr.Message != want {
			t.Fatalf("Block(%d) error %v, want -32007 %q", s, err, want)
		}
	}
	slots, err := f.client.Slots(ctx(t), before-1, after)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(slots) != fmt.Sprint([]uint64{before - 1, before, after}) {
		t.Fatalf("Slots = %v", slots)
	}
	prev, err := f.client.Block(ctx(t), chains.Height(before), keySet{})
	if err != nil {
		t.Fatal(err)
	}
	next, err := f.client.Block(ctx(t), chains.Height(after), keySet{})
	if err != nil {
		t.Fatal(err)
	}
	if next.Parent != prev.Hash {
		t.Fatalf("block after the gap has parent %s, want %s", next.Parent, prev.Hash)
	}
	// Slots beyond the finalized tip are cut by the node.
	slots, err = f.client.Slots(ctx(t), after, after+100)
	if err != nil || fmt.Sprint(slots) != fmt.Sprint([]uint64{after}) {
		t.Fatalf("Slots past tip = %v, %v", slots, err)
	}
}

// Slots splits ranges wider than agave's 500,000 limit (which the fake
// enforces).
func TestSlotsSplitsWideRanges(t *testing.T) {
	f := newFake(t, Config{})
	f.node.Skip(1_200_000)
	f.node.Mine(1)
	tip := f.node.Tip()
	e := f.rpcError(t, `{"jsonrpc":"2.0","id":1,"method":"getBlocks","params":[0,1000001]}`)
	if e.Code != -32602 || e.Message != "Slot range too large; max 500000" {
		t.Fatalf("fake: %+v", e)
	}
	slots, err := f.client.Slots(ctx(t), 0, tip)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(slots) != fmt.Sprint([]uint64{0, tip}) {
		t.Fatalf("Slots = %v", slots)
	}
}

// A v0 payment whose recipient comes from an address lookup table is found
// at the right index with the right amount, in accounts mode (the client's
// request) and in json/full mode (keys from meta.loadedAddresses).
func TestV0LookupTableOrdering(t *testing.T) {
	f := newFake(t, Config{})
	payer, alt, legacy := newKey(t), newKey(t), newKey(t)
	sigV0 := f.node.PaySOL(payer, alt, 7_000_000, false, true)
	sigLegacy := f.node.PaySOL(payer, legacy, 3_000_000, false, false)
	f.node.Mine(1)
	slot := f.node.Tip()
	w := watchKeys(alt, legacy, payer)

	b, err := f.client.Block(ctx(t), chains.Height(slot), w)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("%s/2/%s/7000000", sigV0, sol.PublicKeyFromBytes(alt[:])),
		fmt.Sprintf("%s/1/%s/3000000", sigLegacy, sol.PublicKeyFromBytes(legacy[:])),
	}
	if got := summary(b.Transfers); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("accounts mode: %v, want %v", got, want)
	}

	// Same block in json/full encoding, decoded by the same code.
	_, body := f.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[%d,{"encoding":"json","maxSupportedTransactionVersion":0,"transactionDetails":"full","rewards":false}]}`, slot))
	if !strings.Contains(string(body), `"loadedAddresses":{"readonly":[],"writable":["`+sol.PublicKeyFromBytes(alt[:]).String()+`"]}`) {
		t.Fatalf("json mode lacks loadedAddresses: %s", body)
	}
	full, err := decodeBlock(slot, body, w)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(full.Transfers); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("json mode: %v, want %v", got, want)
	}
	if f.node.Balance(alt) != 7_000_000 {
		t.Fatalf("fake balance %d", f.node.Balance(alt))
	}
}

func summary(ts []chains.Transfer) []string {
	out := make([]string, len(ts))
	for i, tr := range ts {
		out[i] = fmt.Sprintf("%s/%d/%s/%s", tr.TxID, tr.Index, tr.Address, tr.Amount)
	}
	return out
}

// A failed payment is in the block, costs the payer the fee, and is not
// counted; a good payment in the same block is.
func TestFailedTxNotCounted(t *testing.T) {
	f := newFake(t, Config{})
	payer, to := newKey(t), newKey(t)
	bad := f.node.PaySOL(payer, to, 5_000_000, true, false)
	good := f.node.PaySOL(payer, to, 2_000_000, false, true)
	f.node.Mine(1)
	b, err := f.client.Block(ctx(t), chains.Height(f.node.Tip()), watchKeys(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 || b.Transfers[0].TxID != good || b.Transfers[0].Amount.Int64() != 2_000_000 {
		t.Fatalf("transfers %+v (failed one is %s)", b.Transfers, bad)
	}
	_, body := f.rpc(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getTransaction","params":["%s",{"encoding":"json","maxSupportedTransactionVersion":0}]}`, bad))
	if !strings.Contains(string(body), `"err":{"InstructionError":[0,{"Custom":1}]}`) {
		t.Fatalf("failed tx meta: %s", body)
	}
}

// Node errors are classified: skipped vs transient vs not-found vs invalid,
// and the client reads the block fine once the node recovers.
func TestErrorClassification(t *testing.T) {
	f := newFake(t, Config{HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
	f.node.Mine(3)
	slot := f.node.Tip() - 1
	// A skip answer is believed only for a slot getBlocks leaves out (see
	// TestSkipAnswerForAProducedSlotIsAFaultNotASkip): those rows read a
	// skipped slot.
	f.node.Skip(1)
	skipped := f.node.Tip()
	f.node.Mine(1)
	cases := []struct {
		fail int
		is   error
		not  []error
		// skipped: read a slot getBlocks leaves out.
		skipped bool
	}{
		{fail: -32004, is: ErrTransient, not: []error{chains.ErrBlockNotFound, chains.ErrSkipped}},
		{fail: -32014, is: ErrTransient, not: []error{chains.ErrSkipped}},
		{fail: -32019, is: ErrTransient, not: []error{chains.ErrSkipped}},
		{fail: -32009, is: chains.ErrSkipped, not: []error{ErrTransient}, skipped: true},
		{fail: -32007, is: chains.ErrSkipped, not: []error{ErrTransient}, skipped: true},
		{fail: solanafake.FailHTTP429, is: ErrTransient, not: []error{chains.ErrInvalidResponse}},
		{fail: solanafake.FailHTTP500, is: ErrTransient, not: []error{chains.ErrInvalidResponse}},
		{fail: solanafake.FailHang, is: ErrTransient, not: []error{chains.ErrInvalidResponse}},
		{fail: solanafake.FailGarbage, is: chains.ErrInvalidResponse, not: []error{ErrTransient, chains.ErrSkipped}},
	}
	for _, tc := range cases {
		slot := slot
		if tc.skipped {
			slot = skipped
		}
		f.node.FailNext(tc.fail)
		_, err := f.client.Block(ctx(t), chains.Height(slot), keySet{})
		if !errors.Is(err, tc.is) {
			t.Fatalf("fail %d: %v, want %v", tc.fail, err, tc.is)
		}
		for _, not := range tc.not {
			if errors.Is(err, not) {
				t.Fatalf("fail %d: %v must not be %v", tc.fail, err, not)
			}
		}
		if tc.is == chains.ErrInvalidResponse && !strings.Contains(err.Error(), fmt.Sprint(slot)) {
			t.Fatalf("invalid response error %q does not name slot %d", err, slot)
		}
		if _, err := f.client.Block(ctx(t), chains.Height(slot), keySet{}); err != nil && !(tc.skipped && errors.Is(err, chains.ErrSkipped)) {
			t.Fatalf("after fail %d: %v", tc.fail, err)
		}
	}
	// Above the finalized tip: the node's -32004 becomes ErrBlockNotFound.
	_, err := f.client.Block(ctx(t), chains.Height(f.node.Tip()+1), keySet{})
	if !errors.Is(err, chains.ErrBlockNotFound) || errors.Is(err, ErrTransient) {
		t.Fatalf("above tip: %v", err)
	}
	// Tip and Slots classify too.
	f.node.FailNext(solanafake.FailHTTP429)
	if _, err := f.client.Tip(ctx(t)); !errors.Is(err, ErrTransient) {
		t.Fatalf("Tip under 429: %v", err)
	}
	f.node.FailNext(solanafake.FailGarbage)
	if _, err := f.client.Slots(ctx(t), 0, 3); !errors.Is(err, chains.ErrInvalidResponse) {
		t.Fatalf("Slots under garbage: %v", err)
	}
	// A dead node is transient.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c, err := New(Config{URL: dead.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Block(ctx(t), 1, keySet{}); !errors.Is(err, ErrTransient) {
		t.Fatalf("dead node: %v", err)
	}
}

// Responses a real node never sends, and -32015/-32001, end as clear errors.
func TestMalformedAndRareAnswers(t *testing.T) {
	answers := map[string]string{
		"truncated":       `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA"`,
		"no result":       `{"jsonrpc":"2.0","id":1}`,
		"bad hash":        `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"0OIl","parentSlot":1,"previousBlockhash":"x","transactions":[]}}`,
		"balances length": `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":{"err":null,"preBalances":[1,2],"postBalances":[1]},"transaction":{"accountKeys":[],"signatures":["a"]}}]}}`,
		"keys length":     `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":{"err":null,"preBalances":[1,2],"postBalances":[1,3]},"transaction":{"accountKeys":["11111111111111111111111111111111"],"signatures":["a"]}}]}}`,
		"bad key":         `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":{"err":null,"preBalances":[1],"postBalances":[3]},"transaction":{"accountKeys":["0OIl"],"signatures":["a"]}}]}}`,
		"binary tx":       `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":{"err":null,"preBalances":[],"postBalances":[]},"transaction":["AQ==","base64"]}]}}`,
		"no meta":         `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":null,"transaction":{"accountKeys":[],"signatures":["a"]}}]}}`,
		"negative":        `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":{"err":null,"preBalances":[-1],"postBalances":[3]},"transaction":{"accountKeys":["11111111111111111111111111111111"],"signatures":["a"]}}]}}`,
	}
	for name, a := range answers {
		_, err := decodeBlock(77, []byte(a), keySet{})
		if !errors.Is(err, chains.ErrInvalidResponse) || !strings.Contains(err.Error(), "getBlock 77") {
			t.Errorf("%s: %v, want ErrInvalidResponse naming slot 77", name, err)
		}
	}

	for code, want := range map[int]error{-32015: ErrUnsupportedVersion, -32001: ErrCleanedUp} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":%d,"message":"x"},"id":1}`, code)
		}))
		c, err := New(Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Block(ctx(t), 5, keySet{})
		srv.Close()
		if !errors.Is(err, want) || errors.Is(err, ErrTransient) || errors.Is(err, chains.ErrSkipped) {
			t.Fatalf("code %d: %v, want %v", code, err, want)
		}
	}
}

// FuzzDecodeBlock: no input panics; every failure is ErrInvalidResponse, an
// RPC error or transient null.
func FuzzDecodeBlock(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":1,"previousBlockhash":"x","transactions":[{"meta":{"err":null,"preBalances":[1],"postBalances":[3]},"transaction":{"accountKeys":[{"pubkey":"11111111111111111111111111111111"}],"signatures":["a"]}}]}}`))
	f.Add(genBlock(f, 3, nil))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := decodeBlock(1, body, keySet{})
		var rpcErr *RPCError
		if err != nil && !errors.Is(err, chains.ErrInvalidResponse) && !errors.As(err, &rpcErr) && !errors.Is(err, ErrTransient) {
			t.Fatalf("unclassified error %v", err)
		}
	})
}

// The fake rejects what agave rejects: a v0 block read without
// maxSupportedTransactionVersion (here by solana-go's own GetBlock, which
// sends only {"encoding":"base64"}), unknown methods, bad params, bad
// encodings, "processed" commitment; it answers batches.
func TestFakeRejectsLikeAgave(t *testing.T) {
	f := newFake(t, Config{})
	f.node.PaySOL(newKey(t), newKey(t), 1, false, false)
	f.node.Mine(1)
	legacySlot := f.node.Tip()
	f.node.PaySOL(newKey(t), newKey(t), 1, false, true)
	f.node.Mine(1)
	v0Slot := f.node.Tip()

	sc := rpc.New(f.srv.URL)
	if _, err := sc.GetBlock(ctx(t), legacySlot); err != nil {
		t.Fatalf("legacy block without maxSupportedTransactionVersion: %v", err)
	}
	_, err := sc.GetBlock(ctx(t), v0Slot)
	var rerr *jsonrpc.RPCError
	wantMsg := `Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0`
	if !errors.As(err, &rerr) || rerr.Code != -32015 || rerr.Message != wantMsg {
		t.Fatalf("v0 block without maxSupportedTransactionVersion: %v", err)
	}
	v := rpc.MaxSupportedTransactionVersion0
	got, err := sc.GetBlockWithOpts(ctx(t), v0Slot, &rpc.GetBlockOpts{MaxSupportedTransactionVersion: &v, Commitment: rpc.CommitmentFinalized})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := got.Transactions[0].GetTransaction()
	if err != nil || !tx.Message.IsVersioned() || len(tx.Message.AddressTableLookups) != 1 {
		t.Fatalf("v0 tx decoded by solana-go: %+v, %v", tx, err)
	}

	for _, tc := range []struct{ body, msg string }{
		{`{"jsonrpc":"2.0","id":1,"method":"getBlockz","params":[1]}`, "-32601 Method not found"},
		{`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":["one"]}`, `-32602 Invalid params: invalid type: string "one", expected u64.`},
		{`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[1,{"encoding":"hex"}]}`, "-32602 Invalid params: data did not match any variant of untagged enum RpcEncodingConfigWrapper."},
		{`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[1,{"commitment":"processed"}]}`, "-32602 Method does not support commitment below `confirmed`"},
		{`{"jsonrpc":"2.0","id":1,"method":"getBlocks","params":[1,2,{"commitment":"processed"}]}`, "-32602 Method does not support commitment below `confirmed`"},
		{`{"jsonrpc":"2.0","id":1,"method":"getTransaction","params":["xyz"]}`, "-32602 Invalid param: WrongSize"},
		{`{"jsonrpc":"2.0","id":1,"method":"getSignaturesForAddress","params":["11111111111111111111111111111111",{"limit":1001}]}`, "-32602 Invalid limit; max 1000"},
		{`{"id":1,"method":"getSlot"}`, "-32600 Invalid request"},
		{`{"jsonrpc":"2.0","id":1,"method":"getSlot","extra":1}`, "-32600 Invalid request"},
		{`{"jsonrpc":"2.0","id":1,"method":`, "-32700 Parse error"},
		{fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[%d]}`, f.node.Tip()+5), fmt.Sprintf("-32004 Block not available for slot %d", f.node.Tip()+5)},
	} {
		e := f.rpcError(t, tc.body)
		if got := fmt.Sprintf("%d %s", e.Code, e.Message); got != tc.msg {
			t.Errorf("%s\n got %s\nwant %s", tc.body, got, tc.msg)
		}
	}

	// Batch: an array of answers with their ids, errors included.
	_, body := f.rpc(t, `[{"jsonrpc":"2.0","id":"a","method":"getSlot","params":[{"commitment":"finalized"}]},{"jsonrpc":"2.0","id":7,"method":"nope"},{"jsonrpc":"2.0","method":"getSlot"}]`)
	var batch []struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcErrorBody   `json:"error"`
	}
	if err := json.Unmarshal(body, &batch); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if len(batch) != 2 || string(batch[0].ID) != `"a"` || string(batch[0].Result) != fmt.Sprint(f.node.Tip()) ||
		string(batch[1].ID) != "7" || batch[1].Error == nil || batch[1].Error.Code != -32601 {
		t.Fatalf("batch answer %s", body)
	}
	// Only POST application/json.
	resp, err := http.Get(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

// Address mode finds exactly what block mode finds, across skipped slots,
// v0 lookups, failed and unwatched payments, pages past 1000 signatures, and
// resumes from its since map.
func TestPollMatchesBlockMode(t *testing.T) {
	f := newFake(t, Config{})
	payer := newKey(t)
	a, b, other := newKey(t), newKey(t), newKey(t)
	f.node.PaySOL(payer, a, 1_000, false, false)
	f.node.PaySOL(payer, b, 2_000, false, true)
	f.node.PaySOL(payer, a, 3_000, true, false)
	f.node.PaySOL(payer, other, 4_000, false, false)
	f.node.Mine(1)
	f.node.Skip(2)
	f.node.PaySOL(a, b, 500, false, false) // a pays b: only b credited
	f.node.Mine(2)
	for i := range 1001 {
		f.node.PaySOL(payer, a, uint64(10+i), false, i%2 == 0)
	}
	f.node.Mine(1)

	addrs := [][]byte{a[:], b[:]}
	blockMode := scanBlocks(t, f, 1, watchKeys(a, b))
	got, since, err := f.client.Poll(ctx(t), addrs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(blockMode) != 1004 || fmt.Sprint(polledSummary(got)) != fmt.Sprint(blockMode) {
		t.Fatalf("block mode %d transfers, poll %d; differ", len(blockMode), len(got))
	}

	// Nothing new: nothing returned.
	again, since2, err := f.client.Poll(ctx(t), addrs, since)
	if err != nil || len(again) != 0 || fmt.Sprint(since2) != fmt.Sprint(since) {
		t.Fatalf("second poll %+v, %v", again, err)
	}
	// New payments only.
	from := f.node.Tip() + 1
	f.node.PaySOL(payer, b, 777, false, true)
	f.node.Mine(1)
	newer, _, err := f.client.Poll(ctx(t), addrs, since2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(polledSummary(newer)) != fmt.Sprint(scanBlocks(t, f, from, watchKeys(a, b))) || len(newer) != 1 {
		t.Fatalf("third poll %v", polledSummary(newer))
	}
}

// scanBlocks reads every block from slot from to the tip (block mode) and
// returns the credits sorted as Poll sorts them.
func scanBlocks(t *testing.T, f *fake, from uint64, w chains.Watched) []string {
	t.Helper()
	tip, err := f.client.Tip(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	slots, err := f.client.Slots(ctx(t), from, uint64(tip))
	if err != nil {
		t.Fatal(err)
	}
	var out []SlotTransfer
	for _, s := range slots {
		b, err := f.client.Block(ctx(t), chains.Height(s), w)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range b.Transfers {
			out = append(out, SlotTransfer{Transfer: tr, Slot: s, Time: b.Time})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Slot != out[j].Slot {
			return out[i].Slot < out[j].Slot
		}
		if out[i].TxID != out[j].TxID {
			return out[i].TxID < out[j].TxID
		}
		return out[i].Index < out[j].Index
	})
	return polledSummary(out)
}

func polledSummary(ts []SlotTransfer) []string {
	out := make([]string, len(ts))
	for i, tr := range ts {
		out[i] = fmt.Sprintf("%d/%s/%d/%s/%s/%d", tr.Slot, tr.TxID, tr.Index, tr.Address, tr.Amount, tr.Time.Unix())
	}
	return out
}

func TestMode(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		watched int
		want    string
	}{
		{Config{}, 0, ModeAddress},
		{Config{}, 199, ModeAddress},
		{Config{}, 200, ModeBlock},
		{Config{Mode: ModeAuto, AddressModeMax: 10}, 9, ModeAddress},
		{Config{Mode: ModeAuto, AddressModeMax: 10}, 10, ModeBlock},
		{Config{Mode: ModeBlock}, 1, ModeBlock},
		{Config{Mode: ModeAddress}, 1_000_000, ModeAddress},
	} {
		tc.cfg.URL = "http://127.0.0.1:1"
		c, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Mode(tc.watched); got != tc.want {
			t.Errorf("%+v Mode(%d) = %s, want %s", tc.cfg, tc.watched, got, tc.want)
		}
	}
	for _, bad := range []Config{{}, {URL: "http://x", Mode: "blocks"}, {URL: "http://x", AddressModeMax: -1}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// Poll's errors leave since usable and are classified.
func TestPollErrors(t *testing.T) {
	f := newFake(t, Config{})
	a := newKey(t)
	f.node.PaySOL(newKey(t), a, 5, false, false)
	f.node.Mine(1)
	f.node.FailNext(solanafake.FailHTTP500)
	if _, _, err := f.client.Poll(context.Background(), [][]byte{a[:]}, nil); !errors.Is(err, ErrTransient) {
		t.Fatalf("Poll under 500: %v", err)
	}
	f.node.FailNext(solanafake.FailGarbage)
	if _, _, err := f.client.Poll(context.Background(), [][]byte{a[:]}, nil); !errors.Is(err, chains.ErrInvalidResponse) {
		t.Fatalf("Poll under garbage: %v", err)
	}
	if _, _, err := f.client.Poll(context.Background(), [][]byte{a[:5]}, nil); err == nil {
		t.Fatal("short address accepted")
	}
	got, _, err := f.client.Poll(context.Background(), [][]byte{a[:]}, nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("Poll after recovery: %+v, %v", got, err)
	}
}

// A skip answer (-32007, -32009) is believed only when getBlocks confirms
// the slot holds no block. A node that says "skipped" for a slot its own
// getBlocks lists is faulty: the block read fails (transient), the slot is
// never skipped, and the scanner stays at its cursor until the node serves
// it; then the payment in it is found.
func TestSkipAnswerForAProducedSlotIsAFaultNotASkip(t *testing.T) {
	f := newFake(t, Config{})
	f.node.Mine(2)
	before := f.node.Tip()
	f.node.Skip(2)
	f.node.Mine(1)
	produced := f.node.Tip()
	for _, code := range []int{-32007, -32009} {
		f.node.Lose(produced, code)
		_, err := f.client.Block(ctx(t), chains.Height(produced), keySet{})
		if errors.Is(err, chains.ErrSkipped) || !errors.Is(err, ErrFaultySkip) || !errors.Is(err, ErrTransient) {
			t.Fatalf("Block(%d) answered %d while getBlocks lists it: %v, want ErrFaultySkip, not ErrSkipped", produced, code, err)
		}
		var rpcErr *RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != code {
			t.Fatalf("Block(%d): %v does not carry the node's %d", produced, err, code)
		}
	}
	// Really skipped slots stay skips (getBlocks leaves them out).
	for s := before + 1; s < produced; s++ {
		if _, err := f.client.Block(ctx(t), chains.Height(s), keySet{}); !errors.Is(err, chains.ErrSkipped) {
			t.Fatalf("Block(%d) of a skipped slot: %v", s, err)
		}
	}
	f.node.Restore(produced)
	if _, err := f.client.Block(ctx(t), chains.Height(produced), keySet{}); err != nil {
		t.Fatalf("after restore: %v", err)
	}
}
