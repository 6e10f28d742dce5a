package bitcoin

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	ltcchaincfg "github.com/ltcsuite/ltcd/chaincfg"

	"github.com/paywatch/paywatch/chains"
)

// syntheticBlock builds a realistic full block: nTx transactions with one to
// five inputs (segwit and legacy signatures) and two or three P2WPKH, P2TR
// or P2PKH outputs; every matchEvery-th transaction pays a script returned in
// hits.
func syntheticBlock(tb testing.TB, nTx, matchEvery int) (raw []byte, hits [][]byte) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	p2wpkh := func() []byte { return append([]byte{0x00, 0x14}, fill(20)...) }
	p2tr := func() []byte { return append([]byte{0x51, 0x20}, fill(32)...) }
	p2pkh := func() []byte { return append(append([]byte{0x76, 0xa9, 0x14}, fill(20)...), 0x88, 0xac) }
	blk := wire.NewMsgBlock(wire.NewBlockHeader(0x20000000, &chainhash.Hash{1}, &chainhash.Hash{2}, 0x1703a30c, 7))
	blk.Header.Timestamp = time.Unix(1700000000, 0)
	for i := 0; i < nTx; i++ {
		tx := wire.NewMsgTx(2)
		for j := 0; j < 1+rng.IntN(5); j++ {
			in := wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{byte(i), byte(j), 3}, uint32(j)), nil, nil)
			if rng.IntN(3) == 0 {
				in.SignatureScript = fill(107) // <sig> <pubkey>
			} else {
				in.Witness = wire.TxWitness{fill(72), fill(33)}
			}
			tx.AddTxIn(in)
		}
		for j := 0; j < 2+rng.IntN(2); j++ {
			var s []byte
			switch rng.IntN(3) {
			case 0:
				s = p2wpkh()
			case 1:
				s = p2tr()
			default:
				s = p2pkh()
			}
			tx.AddTxOut(wire.NewTxOut(int64(1000+rng.IntN(1e8)), s))
		}
		if matchEvery > 0 && i%matchEvery == 0 {
			s := p2wpkh()
			hits = append(hits, s)
			tx.AddTxOut(wire.NewTxOut(50_000, s))
		}
		blk.AddTransaction(tx)
	}
	var buf bytes.Buffer
	if err := blk.Serialize(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), hits
}

// bigWatchSet returns n random 22-byte P2WPKH scripts plus extra.
func bigWatchSet(n int, extra [][]byte) *chains.WatchSet {
	rng := rand.New(rand.NewPCG(3, 4))
	w := chains.NewWatchSet(n + len(extra))
	key := make([]byte, 22)
	key[1] = 0x14
	for i := 0; i < n; i++ {
		for j := 2; j < 22; j++ {
			key[j] = byte(rng.Uint32())
		}
		w.Add(key)
	}
	w.Add(extra...)
	return w
}

func TestSyntheticBlockMatches(t *testing.T) {
	raw, hits := syntheticBlock(t, 300, 10)
	w := bigWatchSet(1000, hits)
	d, err := btcCodec{params: &chaincfg.MainNetParams}.block(raw, w)
	if err != nil {
		t.Fatal(err)
	}
	if d.txCount != 300 || len(d.transfers) != len(hits) {
		t.Fatalf("%d txs, %d transfers; want 300, %d", d.txCount, len(d.transfers), len(hits))
	}
	for i, tr := range d.transfers {
		if !bytes.Equal(tr.Key, hits[i]) || tr.Amount.Int64() != 50_000 || tr.Address == "" {
			t.Fatalf("transfer %d = %+v", i, tr)
		}
	}
}

// BenchmarkDecodeMatch decodes a ~1.5 MB, 3,000-transaction block and
// matches every output against 1,000,000 watched scripts.
func BenchmarkDecodeMatch(b *testing.B) {
	raw, hits := syntheticBlock(b, 3000, 100)
	w := bigWatchSet(1_000_000, hits)
	c := btcCodec{params: &chaincfg.MainNetParams}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		d, err := c.block(raw, w)
		if err != nil || len(d.transfers) != len(hits) {
			b.Fatalf("%d transfers, %v", len(d.transfers), err)
		}
	}
	b.ReportMetric(float64(3000*b.N)/b.Elapsed().Seconds(), "tx/s")
	b.ReportMetric(float64(3000*b.N)/(cpuTime(b)-cpu).Seconds(), "cpu-tx/s")
	b.ReportMetric(float64(len(raw)), "block-bytes")
}

// BenchmarkDecodeMatchLitecoin is BenchmarkDecodeMatch through the
// Litecoin decoder (ltcd wire, which also handles HogEx and MWEB).
func BenchmarkDecodeMatchLitecoin(b *testing.B) {
	raw, hits := syntheticBlock(b, 3000, 100)
	w := bigWatchSet(1_000_000, hits)
	c := ltcCodec{params: &ltcchaincfg.MainNetParams}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		d, err := c.block(raw, w)
		if err != nil || len(d.transfers) != len(hits) {
			b.Fatalf("%d transfers, %v", len(d.transfers), err)
		}
	}
	b.ReportMetric(float64(3000*b.N)/b.Elapsed().Seconds(), "tx/s")
	b.ReportMetric(float64(3000*b.N)/(cpuTime(b)-cpu).Seconds(), "cpu-tx/s")
}

// BenchmarkDecodeMatchHex adds the hex decoding into a reused buffer that
// Block does on the node's answer.
func BenchmarkDecodeMatchHex(b *testing.B) {
	raw, hits := syntheticBlock(b, 3000, 100)
	hx := []byte(hex.EncodeToString(raw))
	w := bigWatchSet(1_000_000, hits)
	c := btcCodec{params: &chaincfg.MainNetParams}
	buf := make([]byte, 0, len(raw))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		buf = buf[:len(hx)/2]
		if _, err := hex.Decode(buf, hx); err != nil {
			b.Fatal(err)
		}
		d, err := c.block(buf, w)
		if err != nil || len(d.transfers) != len(hits) {
			b.Fatalf("%d transfers, %v", len(d.transfers), err)
		}
	}
	b.ReportMetric(float64(3000*b.N)/b.Elapsed().Seconds(), "tx/s")
	b.ReportMetric(float64(3000*b.N)/(cpuTime(b)-cpu).Seconds(), "cpu-tx/s")
}

// cpuTime is the CPU time the process has used (all threads, garbage
// collector included). On a shared machine tx/s from wall time understates
// the throughput; cpu-tx/s is transactions per CPU-second.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
