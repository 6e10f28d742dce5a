package evm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
)

// cpuTime returns the user+system CPU time used by this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// replayServer answers every call of a method with one pre-encoded result,
// so the benchmark measures the client, not the server's JSON encoding.
type replayServer struct {
	results map[string][]byte
	bytes   int64 // response bytes per Block, measured on the first pass
}

func (s *replayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var reqs []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	batch := len(body) > 0 && body[0] == '['
	if batch {
		json.Unmarshal(body, &reqs)
	} else {
		reqs = reqs[:0]
		var one struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &one)
		reqs = append(reqs, one)
	}
	var buf bytes.Buffer
	if batch {
		buf.WriteByte('[')
	}
	for i, req := range reqs {
		if i > 0 {
			buf.WriteByte(',')
		}
		res, ok := s.results[req.Method]
		buf.WriteString(`{"jsonrpc":"2.0","id":`)
		buf.Write(req.ID)
		if ok {
			buf.WriteString(`,"result":`)
			buf.Write(res)
		} else {
			buf.WriteString(`,"error":{"code":-32601,"message":"method not found"}`)
		}
		buf.WriteByte('}')
	}
	if batch {
		buf.WriteByte(']')
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

// benchBlock is a block of 300 transactions (100 ETH payments, 200 token
// transactions, every tenth with an internal call) and 500 USDT/USDC
// Transfer logs; 60 of the recipients are among 1,000,000 watched addresses.
func benchBlock(b *testing.B) (*replayServer, *chains.WatchSet, int) {
	g := genBlock{Number: 21_000_000, Parent: common.Hash{5}}
	w := chains.NewWatchSet(1_000_000)
	for i := uint64(0); i < 1_000_000; i++ {
		w.Add(addr(1_000_000 + i).Bytes())
	}
	matches := 0
	recipient := func(i int) common.Address {
		if i%10 == 0 {
			matches++
			return addr(1_000_000 + uint64(i)) // watched
		}
		return addr(5_000_000 + uint64(i))
	}
	for i := 0; i < 300; i++ {
		var tx genTx
		if i < 100 {
			to := recipient(i)
			tx = genTx{To: &to, Value: big.NewInt(int64(1e15 + i))}
		} else {
			c := mainnetUSDT
			if i%2 == 0 {
				c = mainnetUSDC
			}
			tx = genTx{To: &c}
			if i%10 == 5 {
				tx.Internal = []genCall{{To: addr(9_000_000 + uint64(i)), Value: big.NewInt(7), Calls: []genCall{{To: addr(8_000_000)}}}}
			}
		}
		g.Txs = append(g.Txs, tx)
	}
	for j := 0; j < 500; j++ {
		c := mainnetUSDT
		if j%3 == 0 {
			c = mainnetUSDC
		}
		g.Logs = append(g.Logs, transferLog(100+j%200, c, addr(7_000_000+uint64(j)), recipient(100+j), big.NewInt(int64(1_000_000+j))))
	}
	f := newFakeNode()
	h := g.install(b, f)
	logs := make([]json.RawMessage, 0, len(f.logs[h]))
	for _, l := range f.logs[h] {
		logs = append(logs, l.Raw)
	}
	s := &replayServer{results: map[string][]byte{
		"eth_getBlockByNumber":   f.blocks[g.Number],
		"eth_getBlockReceipts":   f.receipts[h],
		"eth_getLogs":            mustJSON(b, logs),
		"debug_traceBlockByHash": f.traces[h],
		"eth_blockNumber":        []byte(`"0x1406f40"`),
	}}
	for _, m := range []string{"eth_getBlockByNumber", "eth_getBlockReceipts", "eth_getLogs"} {
		s.bytes += int64(len(s.results[m]))
	}
	return s, w, matches
}

// BenchmarkBlock measures Block on a 300-transaction, 500-log block
// against 1,000,000 watched addresses, over loopback HTTP from a replaying
// server: JSON-RPC round trips, decoding, checks and matching.
func BenchmarkBlock(b *testing.B) {
	s, w, _ := benchBlock(b)
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, trace := range []string{evm.TraceOff, evm.TraceOn} {
		b.Run("trace="+trace, func(b *testing.B) {
			c, err := evm.New(context.Background(), evm.Config{URL: srv.URL, Tokens: mainnetTokens, Trace: trace})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			want := 0
			size := s.bytes
			if trace == evm.TraceOn {
				size += int64(len(s.results["debug_traceBlockByHash"]))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				blk, err := c.Block(context.Background(), 21_000_000, w)
				if err != nil {
					b.Fatal(err)
				}
				if want == 0 {
					want = len(blk.Transfers)
				}
				if len(blk.Transfers) != want || want == 0 {
					b.Fatalf("%d transfers", len(blk.Transfers))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/block")
			// CPU time of the whole process (client, replay server, GC): a
			// figure that does not depend on what else the machine runs.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/block")
		})
	}
}
