package bitcoin_test

import "slices"

// reorgSameHeight: the block holding a payment loses to another block at
// the same height that mines the payment too. Nothing is mined above it, so
// no parent hash shows the reorg: the caught-up scanner asks the node about
// its cursor block, walks back, and records the payment in the new block.
func reorgSameHeight(s *scan) {
	v := s.order("29.00")
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(1)
	got := s.want(v, "detected", 1)
	height, old := *got.Transfers[0].BlockHeight, *got.Transfers[0].BlockHash
	s.node.Invalidate(s.t, old)
	s.node.Mine(s.t, 1)
	if s.node.Tip(s.t) != height {
		s.t.Fatalf("node tip %d, want %d", s.node.Tip(s.t), height)
	}
	replacement := s.node.BlockHash(s.t, height)
	if replacement == old {
		s.t.Fatalf("block %d was not replaced", height)
	}
	s.sync()
	if h, hash := s.cursor(); h != height || hash != replacement {
		s.t.Fatalf("cursor %d %s, want %d %s", h, hash, height, replacement)
	}
	got = s.want(v, "detected", 1)
	if tr := got.Transfers[0]; tr.TxID != txid || tr.Status != "confirming" || *tr.BlockHash != replacement || tr.Confirmations != 1 {
		s.t.Fatalf("after the same-height reorg: %+v", tr)
	}
	s.mine(s.conf - 1)
	s.want(v, "paid", 1)
}

// replacedByEmptyBlock: the block holding a payment loses to an empty block
// at the same height (litecoind generateblock): the payment is back in the
// mempool, pending with no confirmation, not one confirmation in a block
// that is gone.
func replacedByEmptyBlock(s *scan, node *litecoindNode) {
	v := s.order("31.00")
	txid := s.pay(v.Address, units(s.t, v))
	s.mine(1)
	got := s.want(v, "detected", 1)
	height, old := *got.Transfers[0].BlockHeight, *got.Transfers[0].BlockHash
	s.node.Invalidate(s.t, old)
	back, err := node.node.NewAddress(nodeCtx(s.t), "")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := node.node.Call(nodeCtx(s.t), "generateblock", nil, back, []string{}); err != nil {
		s.t.Fatal(err)
	}
	if s.node.Tip(s.t) != height || !slices.Contains(s.node.Mempool(s.t), txid) {
		s.t.Fatalf("node tip %d, mempool %v", s.node.Tip(s.t), s.node.Mempool(s.t))
	}
	s.sync()
	got = s.want(v, "detected", 1)
	if tr := got.Transfers[0]; tr.TxID != txid || tr.Status != "pending" || tr.BlockHeight != nil || tr.Confirmations != 0 {
		s.t.Fatalf("after the empty block won: %+v", tr)
	}
	s.mine(s.conf)
	s.want(v, "paid", 1)
}
