package tron_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/payment"
)

const mainnetUSDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"

// env is a fake node behind an HTTP server and a client reading it.
type env struct {
	node   *tronfake.Node
	srv    *httptest.Server
	client *tron.Client
	usdt   []byte
}

func newEnv(t *testing.T, cfg tron.Config) *env {
	t.Helper()
	return newEnvOn(t, tronfake.New(), cfg)
}

// newEnvOn is newEnv on a given fake node.
func newEnvOn(t *testing.T, node *tronfake.Node, cfg tron.Config) *env {
	t.Helper()
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	cfg.URL = srv.URL
	if cfg.USDTContract == "" {
		cfg.USDTContract = mainnetUSDT
	}
	c, err := tron.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	usdt, err := tron.ParseAddress(cfg.USDTContract)
	if err != nil {
		t.Fatal(err)
	}
	return &env{node: node, srv: srv, client: c, usdt: usdt}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustKey(t *testing.T, addr string) []byte {
	t.Helper()
	k, err := tron.ParseAddress(addr)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var accountSeq atomic.Uint64

// newAccount returns a fresh 20-byte account no other test uses.
func newAccount() []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], accountSeq.Add(1))
	s := sha256.Sum256(append([]byte("paywatch tron test account"), b[:]...))
	return s[:20]
}

func watch(keys ...[]byte) *chains.WatchSet {
	w := chains.NewWatchSet(len(keys))
	w.Add(keys...)
	return w
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestGoldenTRX50 reads the real mainnet block 30864544 with the 50 TRX
// transfer 979e0823… served as captured.
func TestGoldenTRX50(t *testing.T) {
	e := newEnv(t, tron.Config{})
	raw := readFile(t, "mainnet_http_getblockbynum_30864544.json")
	if err := e.node.AddCaptured(raw, nil); err != nil {
		t.Fatal(err)
	}
	to := mustKey(t, "TJ4eV1hnVAiFmeArBsuL6GkgTGVnWBe7eV")
	from := mustKey(t, "TTmaAAbFPtACn1amP3FBkmmUygFh8udAvA")
	b, err := e.client.Block(ctx(t), 30864544, watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if b.Height != 30864544 || b.Hash != "0000000001d6f4a09f60c27befccff6fe3cc593b2d6c46cdc79d3fd4f55db859" ||
		b.Parent != "0000000001d6f49f615231bdeeddd8b563c746188d5e270a58afc87b059f29de" ||
		!b.Time.Equal(time.UnixMilli(1623055923000)) {
		t.Fatalf("block ref %+v time %v", b.BlockRef, b.Time)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers %+v", b.Transfers)
	}
	tr := b.Transfers[0]
	if tr.TxID != "979e0823f455f3b67d65b351052f0265233f422792d31d5dbeb7c24737dd5556" || tr.Index != chains.NativeIndex ||
		tr.Asset != payment.Native || tr.Amount.Cmp(big.NewInt(50_000_000)) != 0 ||
		tr.Address != "TJ4eV1hnVAiFmeArBsuL6GkgTGVnWBe7eV" || string(tr.Key) != string(to) {
		t.Fatalf("transfer %+v amount %s", tr, tr.Amount)
	}
	// txID = sha256(raw_data_hex) on the served bytes.
	var blk struct {
		Transactions []struct {
			RawDataHex string `json:"raw_data_hex"`
			TxID       string `json:"txID"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(raw, &blk); err != nil {
		t.Fatal(err)
	}
	rawData, _ := hex.DecodeString(blk.Transactions[0].RawDataHex)
	if sum := sha256.Sum256(rawData); hex.EncodeToString(sum[:]) != tr.TxID {
		t.Fatalf("sha256(raw_data_hex) = %x, want %s", sum, tr.TxID)
	}
	// The sender, or nobody, being watched reports nothing.
	for _, w := range []*chains.WatchSet{watch(from), watch()} {
		if b, err := e.client.Block(ctx(t), 30864544, w); err != nil || len(b.Transfers) != 0 {
			t.Fatalf("unwatched recipient: %+v, %v", b.Transfers, err)
		}
	}
	if tip, err := e.client.Tip(ctx(t)); err != nil || tip != 30864544 {
		t.Fatalf("Tip = %d, %v", tip, err)
	}
}

// TestGoldenUSDT reads the real USDT TRC-20 transfer 0af79242… (532.079999
// USDT to TBA6Cyp…) from the captured infos of block 30864600.
func TestGoldenUSDT(t *testing.T) {
	e := newEnv(t, tron.Config{})
	if err := e.node.AddCaptured(readFile(t, "reconstructed_block_30864600.json"),
		readFile(t, "mainnet_http_gettransactioninfobyblocknum_30864600.json")); err != nil {
		t.Fatal(err)
	}
	to := mustKey(t, "TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt")
	b, err := e.client.Block(ctx(t), 30864600, watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers %+v", b.Transfers)
	}
	tr := b.Transfers[0]
	if tr.TxID != "0af79242191c6728b79e858a36a4b5c65e4e52b9fcee4dc5af30eac57b6d0953" || tr.Index != 0 ||
		tr.Asset != payment.USDT || tr.Amount.Cmp(big.NewInt(532079999)) != 0 ||
		tr.Address != "TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt" || hex.EncodeToString(tr.Key) != "0d0707963952f2fba59dd06f2b425ace40b492fe" {
		t.Fatalf("transfer %+v amount %s", tr, tr.Amount)
	}
	if got := payment.FormatUnits(tr.Amount, 6); got != "532.079999" {
		t.Fatalf("FormatUnits = %s", got)
	}
	if !b.Time.Equal(time.UnixMilli(1623056091000)) {
		t.Fatalf("time %v", b.Time)
	}
	// The sender is not paid; a client configured for another contract (a
	// look-alike token) reports nothing.
	from := mustKey(t, "TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7")
	if b, err := e.client.Block(ctx(t), 30864600, watch(from)); err != nil || len(b.Transfers) != 0 {
		t.Fatalf("sender watched: %+v, %v", b.Transfers, err)
	}
	other, err := tron.New(tron.Config{URL: e.srv.URL, USDTContract: "TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := other.Block(ctx(t), 30864600, watch(to)); err != nil || len(b.Transfers) != 0 {
		t.Fatalf("other contract: %+v, %v", b.Transfers, err)
	}
}

// TestGoldenUSDTMutations changes one thing at a time in the real USDT
// block and infos; each change that makes it not a successful USDT transfer
// must make the transfer disappear, the harmless ones must keep it.
func TestGoldenUSDTMutations(t *testing.T) {
	block := string(readFile(t, "reconstructed_block_30864600.json"))
	infos := string(readFile(t, "mainnet_http_gettransactioninfobyblocknum_30864600.json"))
	to := mustKey(t, "TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt")
	const usdtTx = `"txID": "0af79242`
	cases := []struct {
		name          string
		block, infos  string
		old, new      string
		inBlock, want int
	}{
		{name: "unchanged", want: 1},
		{name: "receipt REVERT", old: `"result": "SUCCESS"`, new: `"result": "REVERT"`},
		{name: "result FAILED", old: `"receipt": {
            "energy_usage"`, new: `"result": "FAILED", "receipt": {
            "energy_usage"`},
		{name: "Approval event", old: `"ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"`,
			new: `"8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"`},
		{name: "four topics", old: `"0000000000000000000000000d0707963952f2fba59dd06f2b425ace40b492fe"`,
			new: `"0000000000000000000000000d0707963952f2fba59dd06f2b425ace40b492fe", "00"`},
		{name: "other emitter", old: `"address": "a614f803b6fd780986a42c78ec9c7f77e6ded13c"`,
			new: `"address": "a614f803b6fd780986a42c78ec9c7f77e6ded13d"`},
		{name: "tx ret OUT_OF_ENERGY", inBlock: 1},
		{name: "41-prefixed log address", old: `"address": "a614f803b6fd780986a42c78ec9c7f77e6ded13c"`,
			new: `"address": "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"`, want: 1},
		{name: "upper-case topic", old: `"ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"`,
			new: `"DDF252AD1BE2C89B69C2B068FC378DAA952BA7F163C4A11628F55A4DF523B3EF"`, want: 1},
	}
	for _, c := range cases {
		b, inf := block, infos
		if c.inBlock == 1 {
			i := strings.Index(b, usdtTx)
			j := strings.LastIndex(b[:i], `"contractRet": "SUCCESS"`)
			b = b[:j] + `"contractRet": "OUT_OF_ENERGY"` + b[j+len(`"contractRet": "SUCCESS"`):]
		} else if c.old != "" {
			if !strings.Contains(inf, c.old) {
				t.Fatalf("%s: %q not in the capture", c.name, c.old)
			}
			inf = strings.Replace(inf, c.old, c.new, 1)
		}
		e := newEnv(t, tron.Config{})
		if err := e.node.AddCaptured([]byte(b), []byte(inf)); err != nil {
			t.Fatal(err)
		}
		got, err := e.client.Block(ctx(t), 30864600, watch(to))
		if err != nil || len(got.Transfers) != c.want {
			t.Errorf("%s: %d transfers (%v), want %d", c.name, len(got.Transfers), err, c.want)
		}
	}
}

// TestGoldenDust reads the real 1-sun transfer of mainnet block 47964392.
func TestGoldenDust(t *testing.T) {
	e := newEnv(t, tron.Config{})
	if err := e.node.AddCaptured(readFile(t, "mainnet_http_getnowblock_47964392.json"), nil); err != nil {
		t.Fatal(err)
	}
	to := mustKey(t, "4162d0adca402b12e898b8d3a2debc77ce41c8ecc4")
	b, err := e.client.Block(ctx(t), 47964392, watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 || b.Transfers[0].Amount.Cmp(big.NewInt(1)) != 0 ||
		b.Transfers[0].TxID != "30232b8c605f7a3651390ac5fd69d2f8d244791624e9f03d190f5d6cb465bb5e" ||
		b.Transfers[0].Asset != payment.Native {
		t.Fatalf("dust: %+v", b.Transfers)
	}
}

// TestGoldenTRC10Ignored reads real block 30864542 (from a getblockbylimitnext
// capture) whose only transaction is a TRC-10 TransferAssetContract.
func TestGoldenTRC10Ignored(t *testing.T) {
	e := newEnv(t, tron.Config{})
	var list struct {
		Block []json.RawMessage `json:"block"`
	}
	if err := json.Unmarshal(readFile(t, "mainnet_http_getblockbylimitnext_30864542.json"), &list); err != nil || len(list.Block) != 1 {
		t.Fatalf("capture: %v", err)
	}
	if err := e.node.AddCaptured(list.Block[0], nil); err != nil {
		t.Fatal(err)
	}
	to := mustKey(t, "4151521c48d859021ffca3e9ace6b5f6364c44f46c")
	bs, err := e.client.Blocks(ctx(t), 30864542, 30864543, watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].Hash != "0000000001d6f49ebf6a4ff33cc1c1607145c48dc701fbd7ce00f410131e14f8" || len(bs[0].Transfers) != 0 {
		t.Fatalf("blocks %+v", bs)
	}
}

// chain drives the conformance suite against the fake.
type chain struct {
	e     *env
	asset payment.Asset
}

func (c *chain) Source() chains.Source { return c.e.client }

func (c *chain) NewAddress(t *testing.T) ([]byte, string) {
	k := newAccount()
	return k, tron.Address(k)
}

func (c *chain) Pay(t *testing.T, address string, asset payment.Asset, amount *big.Int) string {
	to := mustKey(t, address)
	var txid string
	switch asset {
	case payment.Native:
		txid = c.e.node.PayTRX(newAccount(), to, amount.Int64(), true)
	case payment.USDT:
		txid = c.e.node.PayTRC20(c.e.usdt, newAccount(), to, amount, true)
	default:
		t.Fatalf("asset %s", asset)
	}
	c.e.node.Mine(1)
	return txid
}

func (c *chain) Mine(t *testing.T, n int) { c.e.node.Mine(n) }

func (c *chain) Reorg(t *testing.T, depth int) {
	if err := c.e.node.Reorg(depth); err != nil {
		t.Fatal(err)
	}
}

func (c *chain) Asset() payment.Asset { return c.asset }
func (c *chain) Amount() *big.Int     { return big.NewInt(1_500_000) }

func TestConformance(t *testing.T) {
	for _, asset := range []payment.Asset{payment.Native, payment.USDT} {
		t.Run(string(asset), func(t *testing.T) {
			e := newEnv(t, tron.Config{})
			e.node.Mine(25)
			chainstest.Run(t, &chain{e: e, asset: asset})
		})
	}
}

func TestFailedPaymentsNeverReported(t *testing.T) {
	e := newEnv(t, tron.Config{})
	to := newAccount()
	okTRX := e.node.PayTRX(newAccount(), to, 7, true)
	e.node.PayTRX(newAccount(), to, 8, false)
	okUSDT := e.node.PayTRC20(e.usdt, newAccount(), to, big.NewInt(9), true)
	e.node.PayTRC20(e.usdt, newAccount(), to, big.NewInt(10), false)
	e.node.Mine(1)
	b, err := e.client.Block(ctx(t), chains.Height(e.node.Tip()), watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 2 || b.Transfers[0].TxID != okTRX || b.Transfers[0].Amount.Int64() != 7 ||
		b.Transfers[1].TxID != okUSDT || b.Transfers[1].Amount.Int64() != 9 || b.Transfers[1].Asset != payment.USDT {
		t.Fatalf("transfers %+v", b.Transfers)
	}
}

// TestTRXToUSDTAddressIsNative: TRX sent to an address handed out for USDT
// is reported as the native asset; the matcher classifies it wrong_asset.
func TestTRXToUSDTAddressIsNative(t *testing.T) {
	e := newEnv(t, tron.Config{})
	to := newAccount()
	txid := e.node.PayTRX(newAccount(), to, 249_000_000, true)
	e.node.Mine(1)
	b, err := e.client.Block(ctx(t), chains.Height(e.node.Tip()), watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 || b.Transfers[0].Asset != payment.Native || b.Transfers[0].TxID != txid ||
		b.Transfers[0].Index != chains.NativeIndex {
		t.Fatalf("transfers %+v", b.Transfers)
	}
}

func TestLookAlikeContractAndZeroValue(t *testing.T) {
	e := newEnv(t, tron.Config{})
	to := newAccount()
	fake := newAccount() // a token contract that is not USDT but emits the same event
	e.node.PayTRC20(fake, newAccount(), to, big.NewInt(1_000_000_000), true)
	zero := e.node.PayTRC20(e.usdt, newAccount(), to, big.NewInt(0), true)
	e.node.Mine(1)
	b, err := e.client.Block(ctx(t), chains.Height(e.node.Tip()), watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 || b.Transfers[0].TxID != zero || b.Transfers[0].Amount.Sign() != 0 {
		t.Fatalf("transfers %+v", b.Transfers)
	}
}

func TestReorgAboveSolidifiedDropsPayment(t *testing.T) {
	e := newEnv(t, tron.Config{})
	e.node.Mine(30)
	to := newAccount()
	txid := e.node.PayTRX(newAccount(), to, 1_000_000, true)
	e.node.Mine(3)
	h := e.node.Tip() - 2
	before, err := e.client.Block(ctx(t), chains.Height(h), watch(to))
	if err != nil || len(before.Transfers) != 1 || before.Transfers[0].TxID != txid {
		t.Fatalf("before reorg: %+v, %v", before.Transfers, err)
	}
	fin, err := e.client.FinalizedHeight(ctx(t))
	if err != nil || fin != chains.Height(e.node.Tip()-tronfake.DefaultSolidifiedLag) {
		t.Fatalf("FinalizedHeight = %d, %v; tip %d", fin, err, e.node.Tip())
	}
	if err := e.node.Reorg(int(chains.Height(e.node.Tip())-fin) + 1); !errors.Is(err, tronfake.ErrBelowSolidified) {
		t.Fatalf("reorg of the solidified block: %v", err)
	}
	if err := e.node.Reorg(3); err != nil {
		t.Fatal(err)
	}
	after, err := e.client.Block(ctx(t), chains.Height(h), watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash == before.Hash || len(after.Transfers) != 0 || after.Parent != before.Parent {
		t.Fatalf("after reorg: hash %s (was %s), parent %s (was %s), transfers %+v",
			after.Hash, before.Hash, after.Parent, before.Parent, after.Transfers)
	}
}

func TestFailureClasses(t *testing.T) {
	const key = "3f9c1d2e-secret-api-key"
	e := newEnv(t, tron.Config{APIKey: key, HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
	e.node.RequireAPIKey(key)
	e.node.Mine(6)
	cases := []struct {
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
	all := []error{tron.ErrNodeError, tron.ErrTransient, tron.ErrLiteNode, chains.ErrInvalidResponse, tron.ErrHTTPStatus}
	for _, c := range cases {
		e.node.FailNext(c.kind)
		_, err := e.client.Block(ctx(t), 5, watch())
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.kind, err, c.want)
			continue
		}
		for _, other := range all {
			if other != c.want && errors.Is(err, other) {
				t.Errorf("%s: %v is also %v", c.kind, err, other)
			}
		}
		if !strings.Contains(err.Error(), "block 5") || strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %q must name the height and not the key", c.kind, err)
		}
		// The node is fine again afterwards.
		if _, err := e.client.Block(ctx(t), 5, watch()); err != nil {
			t.Fatalf("after %s: %v", c.kind, err)
		}
	}
	if e.node.APIKeys()[key] == 0 || e.node.APIKeys()[""] != 0 {
		t.Fatalf("keys seen by the node: %v", e.node.APIKeys())
	}
	// A wrong key: TronGrid's 401, not retried, the key never echoed.
	wrong, err := tron.New(tron.Config{URL: e.srv.URL, USDTContract: mainnetUSDT, APIKey: "wrong-" + key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Tip(ctx(t))
	if !errors.Is(err, tron.ErrHTTPStatus) || errors.Is(err, tron.ErrTransient) ||
		!strings.Contains(err.Error(), "ApiKey not exists") || strings.Contains(err.Error(), key) {
		t.Fatalf("wrong key: %v", err)
	}
	// A cancelled context is neither transient nor invalid.
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.client.Tip(cctx); !errors.Is(err, context.Canceled) || errors.Is(err, tron.ErrTransient) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestAboveTipAndMismatchedInfos(t *testing.T) {
	e := newEnv(t, tron.Config{})
	e.node.Mine(3)
	if _, err := e.client.Block(ctx(t), 4, watch()); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Block(tip+1) = %v", err)
	}
	if _, err := e.client.Blocks(ctx(t), 4, 10, watch()); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Blocks(tip+1, …) = %v", err)
	}
	// Infos that miss a contract call of the block (the head moved between
	// the two calls): transient, never a block without the call's transfers.
	if err := e.node.AddCaptured(readFile(t, "reconstructed_block_30864600.json"), []byte("[]")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Block(ctx(t), 30864600, watch()); !errors.Is(err, tron.ErrTransient) {
		t.Fatalf("missing infos: %v", err)
	}
}

func TestBlocksBatch(t *testing.T) {
	e := newEnv(t, tron.Config{})
	to := newAccount()
	var want []string
	for i := range 130 {
		if i%20 == 3 {
			want = append(want, e.node.PayTRX(newAccount(), to, int64(i+1), true))
			want = append(want, e.node.PayTRC20(e.usdt, newAccount(), to, big.NewInt(int64(i+1)), true))
		}
		e.node.Mine(1)
	}
	tip := e.node.Tip()
	bs, err := e.client.Blocks(ctx(t), 1, chains.Height(tip+50), watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(bs)) != tip {
		t.Fatalf("%d blocks, want %d (stop at head)", len(bs), tip)
	}
	var got []string
	for i, b := range bs {
		if b.Height != chains.Height(i+1) || (i > 0 && b.Parent != bs[i-1].Hash) {
			t.Fatalf("block %d: %+v", i, b.BlockRef)
		}
		one, err := e.client.Block(ctx(t), b.Height, watch(to))
		if err != nil || one.Hash != b.Hash || len(one.Transfers) != len(b.Transfers) {
			t.Fatalf("Block(%d) differs from the batch: %v", b.Height, err)
		}
		for _, tr := range b.Transfers {
			got = append(got, tr.TxID)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("batch transfers %v, want %v", got, want)
	}
}

// TestBadResponses feeds the client bodies a broken or hostile node could
// send; each must be a clear error, never a panic or a silent skip.
func TestBadResponses(t *testing.T) {
	good := `{"blockID":"0000000000000005aa","block_header":{"raw_data":{"number":5,"parentHash":"00","timestamp":1}}`
	transfer := func(to, amount string) string {
		return `,"transactions":[{"txID":"` + strings.Repeat("ab", 32) + `","ret":[{"contractRet":"SUCCESS"}],"raw_data":{"contract":[{"type":"TransferContract","parameter":{"value":{"to_address":"` + to + `","amount":` + amount + `}}}]}}]}`
	}
	watched := mustKey(t, "TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt")
	cases := []struct {
		name, body string
		want       error
	}{
		{"wrong number", strings.Replace(good, `"number":5`, `"number":6`, 1) + "}", chains.ErrInvalidResponse},
		{"no blockID", `{"block_header":{"raw_data":{"number":5}}}`, chains.ErrInvalidResponse},
		{"text", "<html>oops</html>", chains.ErrInvalidResponse},
		{"bad to_address", good + transfer("TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt", "1"), chains.ErrInvalidResponse},
		{"negative amount", good + transfer("410d0707963952f2fba59dd06f2b425ace40b492fe", "-5"), chains.ErrInvalidResponse},
		{"float amount", good + transfer("410d0707963952f2fba59dd06f2b425ace40b492fe", "1.5"), chains.ErrInvalidResponse},
		{"number not a number", strings.Replace(good, `"number":5`, `"number":"five"`, 1) + "}", chains.ErrInvalidResponse},
		{"infos not a list", strings.Replace(good, `"number":5`, `"number":5`, 1) + `,"transactions":[{"txID":"` + strings.Repeat("cd", 32) + `","ret":[{"contractRet":"SUCCESS"}],"raw_data":{"contract":[{"type":"TriggerSmartContract","parameter":{"value":{}}}]}}]}`, chains.ErrInvalidResponse},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(c.body))
		}))
		cl, err := tron.New(tron.Config{URL: srv.URL, USDTContract: mainnetUSDT})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Block(ctx(t), 5, watch(watched))
		srv.Close()
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "block 5") {
			t.Errorf("%s: %v, want %v naming block 5", c.name, err, c.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []tron.Config{
		{URL: "", USDTContract: mainnetUSDT},
		{URL: "ftp://x", USDTContract: mainnetUSDT},
		{URL: "http://127.0.0.1:8090", USDTContract: ""},
		{URL: "http://127.0.0.1:8090", USDTContract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"},
	} {
		if _, err := tron.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// TestLogIndexAndForeignInfos: the Index of a USDT transfer is its position
// in the transaction's log list, so two transfers of one transaction get
// distinct keys; an info for a transaction the block does not hold (the
// head moved between the two calls) is transient.
func TestLogIndexAndForeignInfos(t *testing.T) {
	block := readFile(t, "reconstructed_block_30864600.json")
	infos := string(readFile(t, "mainnet_http_gettransactioninfobyblocknum_30864600.json"))
	to := mustKey(t, "TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt")
	const logStart = `"log": [`
	i := strings.Index(infos, logStart) + len(logStart)
	j := strings.Index(infos[i:], "}") + i + 1 // end of the real USDT log
	usdtLog := infos[i:j]
	other := `{"address": "1111111111111111111111111111111111111111", "data": "", "topics": ["ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"]}`
	second := strings.Replace(usdtLog, "1fb6e57f", "00000007", 1)
	threeLogs := infos[:i] + other + "," + usdtLog + "," + second + infos[j:]

	e := newEnv(t, tron.Config{})
	if err := e.node.AddCaptured(block, []byte(threeLogs)); err != nil {
		t.Fatal(err)
	}
	b, err := e.client.Block(ctx(t), 30864600, watch(to))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 2 || b.Transfers[0].Index != 1 || b.Transfers[1].Index != 2 ||
		b.Transfers[0].Amount.Int64() != 532079999 || b.Transfers[1].Amount.Int64() != 7 ||
		b.Transfers[0].TxID != b.Transfers[1].TxID {
		t.Fatalf("transfers %+v", b.Transfers)
	}

	foreign := strings.Replace(infos, "8971d5c2c3b45dee02860ce821e9c2ba601424c311a7a80545848a4c4c09b4a1", strings.Repeat("ee", 32), 1)
	e = newEnv(t, tron.Config{})
	if err := e.node.AddCaptured(block, []byte(foreign)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Block(ctx(t), 30864600, watch(to)); !errors.Is(err, tron.ErrTransient) || !strings.Contains(err.Error(), "block 30864600") {
		t.Fatalf("foreign info: %v", err)
	}
}
