package evm_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// BenchmarkApplyBlock measures the Sink's side of one Ethereum block: the
// service's ApplyBlock (one PostgreSQL transaction: block ref, transfers,
// confirmations, matcher decisions, events, cursor) for a block with k
// transfers to open intents (1 wei each, so the intents stay detected and
// are re-decided every time), over a real PostgreSQL. k = 0 is the cost of
// a block with nothing for us.
func BenchmarkApplyBlock(b *testing.B) {
	for _, k := range []int{0, 3, 10} {
		b.Run(fmt.Sprintf("transfers=%d", k), func(b *testing.B) {
			e := paywatchtest.New(b, paywatchtest.Only(payment.Ethereum))
			ctx := context.Background()
			const pool = 200
			var keys [][]byte
			for i := range pool {
				v := e.CreateIntent("order", fmt.Sprintf("B-%d", i), "", "25.00", string(payment.ETH))
				keys = append(keys, common.HexToAddress(v.Address).Bytes())
			}
			cur, err := e.Sink.Cursor(ctx, payment.Ethereum)
			if err != nil {
				b.Fatal(err)
			}
			height, parent := uint64(cur.Height), cur.Hash
			n := 0
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				height++
				blk := chains.Block{BlockRef: chains.BlockRef{Height: chains.Height(height), Parent: parent,
					Hash: common.BigToHash(new(big.Int).SetUint64(height<<20 + 1)).Hex()}, Time: time.Unix(1_700_000_000, 0)}
				for j := range k {
					key := keys[n%pool]
					n++
					blk.Transfers = append(blk.Transfers, chains.Transfer{
						TxID: common.BigToHash(big.NewInt(int64(n))).Hex(), Index: int64(j), Asset: payment.Native,
						Key: key, Address: common.BytesToAddress(key).Hex(), Amount: big.NewInt(1)})
				}
				if err := e.Sink.ApplyBlock(ctx, payment.Ethereum, blk, chains.Tips{Node: chains.Height(height)}); err != nil {
					b.Fatal(err)
				}
				parent = blk.Hash
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/block")
			// CPU of this process only (client side); the rest is PostgreSQL.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "client-cpu-µs/block")
		})
	}
}
