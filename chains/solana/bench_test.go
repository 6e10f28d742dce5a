package solana

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/chains"
)

// genBlock builds a getBlock response body in agave's transactionDetails
// "accounts" shape (members alphabetical, as agave prints them) with n
// transactions: 70% votes (3 accounts, fee only), 1% failed, the rest
// transfers/swaps with 6-24 accounts, token balances and one or two credited
// accounts. When w is non-nil, every 25th credited account is added to it;
// the number of such credits is returned.
func genBlock(tb testing.TB, n int, w *chains.WatchSet) []byte {
	body, _ := genBlockCount(tb, n, w)
	return body
}

func genBlockCount(tb testing.TB, n int, w *chains.WatchSet) ([]byte, int) {
	tb.Helper()
	rng := mrand.New(mrand.NewPCG(1, 2))
	key := func() string {
		var k [32]byte
		for i := range k {
			k[i] = byte(rng.Uint32())
		}
		return sol.PublicKeyFromBytes(k[:]).String()
	}
	sig := func() string {
		var s [64]byte
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		return sol.SignatureFromBytes(s[:]).String()
	}
	type account struct {
		Pubkey   string `json:"pubkey"`
		Signer   bool   `json:"signer"`
		Source   string `json:"source"`
		Writable bool   `json:"writable"`
	}
	type tokenBalance struct {
		AccountIndex  int            `json:"accountIndex"`
		Mint          string         `json:"mint"`
		Owner         string         `json:"owner"`
		ProgramID     string         `json:"programId"`
		UITokenAmount map[string]any `json:"uiTokenAmount"`
	}
	voteProgram := "Vote111111111111111111111111111111111111111"
	credited := 0
	txs := make([]map[string]any, n)
	for i := range txs {
		var keys []account
		var pre, post []uint64
		var tokens []tokenBalance
		errV := any(nil)
		status := map[string]any{"Ok": nil}
		version := any("legacy")
		switch r := rng.IntN(100); {
		case r < 70:
			keys = []account{{key(), true, "transaction", true}, {key(), false, "transaction", true}, {voteProgram, false, "transaction", false}}
			bal := 1_000_000_000 + rng.Uint64N(1e12)
			pre = []uint64{bal, 27_074_400, 1}
			post = []uint64{bal - 5000, 27_074_400, 1}
		default:
			m := 6 + rng.IntN(19)
			version = 0
			for j := range m {
				src := "transaction"
				if j >= m-m/3 {
					src = "lookupTable"
				}
				keys = append(keys, account{key(), j == 0, src, j < m/2})
				b := rng.Uint64N(1e13)
				pre = append(pre, b)
				post = append(post, b)
			}
			post[0] -= 5000 + 1_000_000
			for c := 1 + rng.IntN(2); c > 0; c-- {
				j := 1 + rng.IntN(m-1)
				post[j] = pre[j] + 1 + rng.Uint64N(1e9)
				credited++
				if w != nil && credited%25 == 0 {
					pk := sol.MustPublicKeyFromBase58(keys[j].Pubkey)
					w.Add(pk[:])
				}
			}
			tokens = []tokenBalance{{1, key(), key(), "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
				map[string]any{"amount": "98306134746", "decimals": 9, "uiAmount": 98.306134746, "uiAmountString": "98.306134746"}}}
			if r == 99 {
				errV = map[string]any{"InstructionError": []any{2, map[string]any{"Custom": 6001}}}
				status = map[string]any{"Err": errV}
				copy(post, pre)
				post[0] = pre[0] - 5000
			}
		}
		if tokens == nil {
			tokens = []tokenBalance{}
		}
		txs[i] = map[string]any{
			"meta": map[string]any{
				"err": errV, "fee": 5000, "postBalances": post, "postTokenBalances": tokens,
				"preBalances": pre, "preTokenBalances": tokens, "status": status,
			},
			"transaction": map[string]any{"accountKeys": keys, "signatures": []string{sig()}},
			"version":     version,
		}
	}
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"result": map[string]any{
			"blockHeight": 300_000_000, "blockTime": 1_740_000_000, "blockhash": key(),
			"parentSlot": 320_000_000, "previousBlockhash": key(), "transactions": txs,
		},
		"id": 1,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return body, credited
}

// BenchmarkDecodeBlockAccounts decodes and matches a 1,500-transaction block
// (accounts mode, from bytes) against 1,000,000 watched 32-byte keys.
//
//	go test -run '^$' -bench DecodeBlockAccounts -benchmem ./chains/solana/
func BenchmarkDecodeBlockAccounts(b *testing.B) { benchDecode(b, decodeBlock) }

// BenchmarkDecodeBlockAccountsStd is the same with the encoding/json oracle,
// for comparison.
func BenchmarkDecodeBlockAccountsStd(b *testing.B) { benchDecode(b, decodeBlockStd) }

func benchDecode(b *testing.B, decode func(uint64, []byte, chains.Watched) (chains.Block, error)) {
	ws := chains.NewWatchSet(1_000_100)
	var k [32]byte
	for range 1_000_000 {
		if _, err := rand.Read(k[:]); err != nil {
			b.Fatal(err)
		}
		ws.Add(k[:])
	}
	body, credited := genBlockCount(b, 1500, ws)
	want := credited / 25
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		blk, err := decode(320_000_001, body, ws)
		if err != nil {
			b.Fatal(err)
		}
		if len(blk.Transfers) < want-2 || len(blk.Transfers) > want {
			b.Fatalf("%d transfers, want about %d", len(blk.Transfers), want)
		}
	}
	b.ReportMetric(float64(len(body))/1e6, "MB/block")
}

// TestGeneratedBlockMatches checks the benchmark's generator and the decoder
// agree on what is credited.
func TestGeneratedBlockMatches(t *testing.T) {
	ws := chains.NewWatchSet(100)
	body, credited := genBlockCount(t, 1500, ws)
	blk, err := decodeBlock(1, body, ws)
	if err != nil {
		t.Fatal(err)
	}
	// A failed tx never credits, so all watched credits are found (the
	// generator zeroes credits of failed txs after registering them).
	if len(blk.Transfers) == 0 || len(blk.Transfers) > credited/25 || ws.Len() != credited/25 {
		t.Fatalf("%d transfers, %d watched, %d credited", len(blk.Transfers), ws.Len(), credited)
	}
}

// batchOnly is a watched set that answers batches only, and counts them.
type batchOnly struct {
	*chains.WatchSet
	batches, keys int
}

func (b *batchOnly) Contains([]byte) bool { panic("a block's keys must be looked up in a batch") }

func (b *batchOnly) ContainsBatch(keys [][]byte, out []bool) {
	b.batches++
	b.keys += len(keys)
	b.WatchSet.ContainsBatch(keys, out)
}

// A block's credited accounts are looked up in one batch (the watched set
// overlaps their memory loads), with the answer one-by-one lookups give.
func TestBlockKeysAreLookedUpInOneBatch(t *testing.T) {
	ws := chains.NewWatchSet(100)
	body, credited := genBlockCount(t, 1500, ws)
	one, err := decodeBlock(1, body, struct{ chains.Watched }{ws}) // one by one
	if err != nil {
		t.Fatal(err)
	}
	b := &batchOnly{WatchSet: ws}
	blk, err := decodeBlock(1, body, b)
	if err != nil {
		t.Fatal(err)
	}
	if b.batches != 1 || b.keys < credited/2 {
		t.Fatalf("%d batches of %d keys in all for %d credited accounts, want one batch of them", b.batches, b.keys, credited)
	}
	if got, want := summary(blk.Transfers), summary(one.Transfers); len(got) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batched: %v\nwant %v", got, want)
	}
}
