package bitcoin_test

import (
	"bytes"

	ltcwire "github.com/ltcsuite/ltcd/wire"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/devnet"
)

// mweb activates MWEB on the node (blocks up to the activation height, a
// peg-in, then blocks with a HogEx and an MWEB extension block), scans
// through it, and pays an intent after activation.
func mweb(s *scan, node *litecoindNode) {
	from, _ := s.cursor()
	if err := node.node.ActivateMWEB(nodeCtx(s.t)); err != nil {
		s.t.Fatalf("ActivateMWEB: %v", err)
	}
	v := s.order("90.00")
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(s.conf)
	tip := s.node.Tip(s.t)
	if h, hash := s.cursor(); h != tip || hash != s.node.BlockHash(s.t, tip) || from >= devnet.MWEBHeight {
		s.t.Fatalf("cursor %d %s, node %d (scan started at %d)", h, hash, tip, from)
	}
	got := s.want(v, "paid", 1)
	if got.Transfers[0].TxID != txid || got.Transfers[0].Status != "confirmed" {
		s.t.Fatalf("%+v", got.Transfers)
	}
	// Every block from activation on carries a HogEx and an MWEB block; the
	// payment's block is one of them.
	hogex := 0
	for h := int64(devnet.MWEBHeight); h <= tip; h++ {
		raw, err := s.src.RawBlock(nodeCtx(s.t), chains.Height(h))
		if err != nil {
			s.t.Fatal(err)
		}
		var mb ltcwire.MsgBlock
		if err := mb.Deserialize(bytes.NewReader(raw)); err != nil {
			s.t.Fatalf("block %d: %v", h, err)
		}
		last := mb.Transactions[len(mb.Transactions)-1]
		if last.IsHogEx && mb.MwebHeader != nil {
			hogex++
		}
	}
	if want := int(tip - devnet.MWEBHeight + 1); hogex != want {
		s.t.Fatalf("%d blocks with a HogEx from %d to %d, want %d", hogex, devnet.MWEBHeight, tip, want)
	}
	if pay := *got.Transfers[0].BlockHeight; pay < devnet.MWEBHeight {
		s.t.Fatalf("payment at %d, before activation", pay)
	}
	if n := s.count(`SELECT count(*) FROM blocks WHERE network = 'litecoin' AND height >= $1`, devnet.MWEBHeight); n != tip-devnet.MWEBHeight+1 {
		s.t.Fatalf("%d MWEB blocks stored, want %d", n, tip-devnet.MWEBHeight+1)
	}
}
