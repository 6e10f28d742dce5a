package tron_test

import (
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron"
)

// Issue 27, hole 3: the block and its transaction infos come from two calls
// read by number. The node switches forks between them, to a fork holding
// the same transaction with another result (out of energy); the client must
// never report one fork's block id with the other fork's results.
func TestBlockInfosFromAnotherForkAreNotPaired(t *testing.T) {
	for _, batch := range []bool{false, true} {
		name := map[bool]string{false: "Block", true: "Blocks"}[batch]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tron.Config{})
			to := newAccount()
			e.node.Mine(2)
			txid := e.node.PayTRC20(e.usdt, newAccount(), to, big.NewInt(7_000_000), true)
			e.node.Mine(1)
			h := e.node.Tip()
			first := e.node.BlockID(h)
			switched := false
			e.node.OnNext("/wallet/gettransactioninfobyblocknum", func() {
				if err := e.node.ReorgReplay(1, txid); err != nil {
					t.Error(err)
				}
				switched = true
			})
			var blk chains.Block
			if batch {
				bs, err := e.client.Blocks(ctx(t), chains.Height(h), chains.Height(h+1), watch(to))
				if err != nil {
					t.Fatal(err)
				}
				blk = bs[0]
			} else {
				var err error
				if blk, err = e.client.Block(ctx(t), chains.Height(h), watch(to)); err != nil {
					t.Fatal(err)
				}
			}
			if !switched {
				t.Fatal("the node never switched forks: the test proves nothing")
			}
			second := e.node.BlockID(h)
			if first == second {
				t.Fatal("the replayed fork has the same block id")
			}
			switch blk.Hash {
			case first: // the paid fork: its payment must be there
				if len(blk.Transfers) != 1 || blk.Transfers[0].TxID != txid || blk.Transfers[0].Amount.Int64() != 7_000_000 {
					t.Fatalf("block %s (paid fork) reported with transfers %+v", first, blk.Transfers)
				}
			case second: // the fork where the call ran out of energy
				if len(blk.Transfers) != 0 {
					t.Fatalf("block %s (failed fork) reported with transfers %+v", second, blk.Transfers)
				}
			default:
				t.Fatalf("block hash %s is neither fork's (%s, %s)", blk.Hash, first, second)
			}
		})
	}
}
