package tron

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"math/big"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
)

const (
	benchTxs     = 300
	benchWatched = 1_000_000
	benchHits    = 10 // payments to watched accounts per block
)

// benchWatchSet returns benchWatched random 20-byte accounts, the first
// benchHits of which the benchmark blocks pay.
func benchWatchSet() (*chains.WatchSet, [][]byte) {
	rng := rand.New(rand.NewChaCha8([32]byte{'t', 'r', 'o', 'n'}))
	w := chains.NewWatchSet(benchWatched)
	hits := make([][]byte, 0, benchHits)
	batch := make([][]byte, 0, 4096)
	for i := range benchWatched {
		k := make([]byte, 20)
		for j := 0; j < 20; j += 8 {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], rng.Uint64())
			copy(k[j:], b[:])
		}
		if i < benchHits {
			hits = append(hits, k)
		}
		batch = append(batch, k)
		if len(batch) == cap(batch) {
			w.Add(batch...)
			batch = batch[:0]
		}
	}
	w.Add(batch...)
	return w, hits
}

// benchBodies mines one block of benchTxs payments on the fake and returns
// the getblockbynum and gettransactioninfobyblocknum bodies the real node
// would send for it.
func benchBodies(b *testing.B, usdt []byte, hits [][]byte, trc20 bool) (block, infos []byte) {
	node := tronfake.New()
	rng := rand.New(rand.NewPCG(1, 2))
	account := func() []byte {
		k := make([]byte, 20)
		binary.LittleEndian.PutUint64(k, rng.Uint64())
		binary.LittleEndian.PutUint64(k[8:], rng.Uint64())
		return k
	}
	for i := range benchTxs {
		to := account()
		if i%(benchTxs/benchHits) == 0 {
			to = hits[i/(benchTxs/benchHits)]
		}
		if trc20 {
			node.PayTRC20(usdt, account(), to, big.NewInt(int64(rng.IntN(1e9))), true)
		} else {
			node.PayTRX(account(), to, int64(1+rng.IntN(1e9)), true)
		}
	}
	node.Mine(1)
	get := func(path string) []byte {
		rec := httptest.NewRecorder()
		node.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(`{"num":1}`)))
		out, _ := io.ReadAll(rec.Body)
		return out
	}
	return get("/wallet/getblockbynum"), get("/wallet/gettransactioninfobyblocknum")
}

// BenchmarkDecodeMatch decodes and matches one 300-transaction block against
// one million watched accounts: USDT has 300 TriggerSmartContract transfers
// with 300 Transfer logs (block + infos bodies), TRX 300 TransferContracts.
func BenchmarkDecodeMatch(b *testing.B) {
	c, err := New(Config{URL: "http://127.0.0.1:1", USDTContract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"})
	if err != nil {
		b.Fatal(err)
	}
	w, hits := benchWatchSet()
	for _, kind := range []string{"USDT", "TRX"} {
		block, infos := benchBodies(b, c.usdt[:], hits, kind == "USDT")
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(int64(len(block) + len(infos)))
			b.ReportAllocs()
			for b.Loop() {
				var blk blockJSON
				if err := json.Unmarshal(block, &blk); err != nil {
					b.Fatal(err)
				}
				need, err := checkBlock(1, &blk)
				if err != nil {
					b.Fatal(err)
				}
				var is []txInfoJSON
				if need {
					if is, err = decodeInfos(1, infos); err != nil {
						b.Fatal(err)
					}
				}
				out, err := c.match(1, &blk, is, w)
				if err != nil || len(out.Transfers) != benchHits {
					b.Fatalf("%d transfers, %v", len(out.Transfers), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/block")
		})
	}
}

// BenchmarkBlockHTTP is Client.Block end to end against the fake over
// loopback HTTP (two calls per USDT block).
func BenchmarkBlockHTTP(b *testing.B) {
	w, hits := benchWatchSet()
	usdt, _ := ParseAddress("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	node := tronfake.New()
	for i := range benchTxs {
		to := make([]byte, 20)
		binary.LittleEndian.PutUint64(to, uint64(i+1))
		if i%(benchTxs/benchHits) == 0 {
			to = hits[i/(benchTxs/benchHits)]
		}
		node.PayTRC20(usdt, to, to, big.NewInt(int64(i+1)), true)
	}
	node.Mine(1)
	srv := httptest.NewServer(node)
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, USDTContract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Block(b.Context(), 1, w)
		if err != nil || len(out.Transfers) != benchHits {
			b.Fatalf("%d transfers, %v", len(out.Transfers), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/block")
}
