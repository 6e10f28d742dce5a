package sim

import (
	"math/big"
	"math/rand/v2"
	"sort"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// blockKeyed names the networks whose simulated decoder keys token
// transfers by their log's position in the block (with the logs of the
// transactions before it), as chains/evm did before issue 32 item 1; the
// decoders key every transfer by its position inside its transaction, so
// it is empty unless -block-keys asks to reproduce that bug.
var blockKeyed = map[payment.Network]bool{}

// keyAt is the key a decoder gives transfer t (its Index the position
// inside its transaction) when its transaction is mined behind logsBefore
// logs of other transactions in its block.
func keyAt(n payment.Network, t chains.Transfer, logsBefore int) chains.Transfer {
	if blockKeyed[n] && t.Asset != payment.Native && t.Index >= 0 {
		t.Index += int64(logsBefore)
	}
	return t
}

// accountChain: a transaction mined again executes again against the
// state of the new branch (Ethereum, Tron, Solana), so what it moves may
// change; a UTXO transaction's outputs are fixed.
func accountChain(n payment.Network) bool { return !hasMempool(n) }

// remine replaces the chain's last depth blocks by depth+1+C%2 blocks in
// which every dropped transaction is mined again, in a random block of the
// new branch, behind 1-4 logs of other transactions and in another order
// (issue 32). On an account chain it is executed again (mode B%3): the
// same content; another amount to the same address (a transfer by a
// contract: internal, token or Solana balance change; a transaction's own
// value is fixed by its signature); or it pays nothing (it failed this
// time).
func (r *run) remine(n payment.Network, nd *node, a Action) {
	chain := nd.f.Chain()
	depth := 1 + a.A%int(max(1, safetyDepth[n]))
	if depth > len(chain)-2 {
		depth = len(chain) - 2
	}
	// Within the safety depth and above the final height: a routine reorg,
	// which must never stop a scanner.
	final, err := nd.f.FinalizedHeight(r.ctx)
	if err != nil {
		return // the node is down: its final height is not known
	}
	if depth > int(nd.f.TipHeight()-final) {
		depth = int(nd.f.TipHeight() - final)
	}
	// Mostly down to the newest block that holds transfers, when the
	// bounds allow: a re-mine of empty blocks shows nothing.
	if a.A%4 != 0 {
		for d := 1; d <= min(len(chain)-2, max(1, int(safetyDepth[n])), int(nd.f.TipHeight()-final)); d++ {
			if len(chain[len(chain)-d].Transfers) > 0 {
				depth = d
				break
			}
		}
	}
	if depth < 1 {
		return
	}
	byTx := map[string][]chains.Transfer{}
	var order []string
	for _, b := range chain[len(chain)-depth:] {
		for _, t := range b.Transfers {
			if _, ok := byTx[t.TxID]; !ok {
				order = append(order, t.TxID)
			}
			byTx[t.TxID] = append(byTx[t.TxID], r.local(t))
			r.disturb(t.TxID)
		}
	}
	length := depth + 1 + a.C%2
	blocks := make([][]chains.Transfer, length)
	logs := make([]int, length)
	rng := rand.New(rand.NewPCG(uint64(a.D), 11))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	mode := a.B % 3
	if !accountChain(n) {
		mode = 0
	}
	changed := 0
	for _, id := range order {
		k := rng.IntN(length)
		logs[k] += 1 + rng.IntN(4) // other transactions' logs ahead of it
		for _, t := range byTx[id] {
			switch {
			case mode == 2:
				changed++
				continue // executed again, it failed: nothing moves
			case mode == 1 && t.Index != chains.NativeIndex:
				// What a contract forwards depends on the state it runs on.
				amt := new(big.Int).Mul(t.Amount, big.NewInt(int64(30+rng.IntN(60))))
				amt.Div(amt, big.NewInt(100))
				if amt.Sign() == 0 {
					amt.SetInt64(1)
				}
				t.Amount = amt
				changed++
			}
			blocks[k] = append(blocks[k], keyAt(n, t, logs[k]))
		}
	}
	for _, b := range blocks {
		sort.SliceStable(b, func(i, j int) bool { return b[i].TxID > b[j].TxID }) // another order
	}
	nd.f.ReorgTo(depth, blocks)
	names := []string{"the same", "another amount", "paying nothing"}
	r.logf("%s remine depth %d -> %d new blocks: %d transactions at other positions, executed again: %s (%d transfers changed); tip %d",
		n, depth, length, len(order), names[mode], changed, nd.f.TipHeight())
	if a.D%2 == 0 {
		r.scanNet(n, "after remine")
		r.logf("%s scan -> %s", n, r.cursorString(n))
	}
}

// local returns t with its key back at its position inside its
// transaction (undoing keyAt's block offset).
func (r *run) local(t chains.Transfer) chains.Transfer {
	if tx := r.txs[t.TxID]; tx != nil {
		for _, s := range tx.transfers {
			if s.Asset == t.Asset && string(s.Key) == string(t.Key) && (s.Index == t.Index || blockKeyed[tx.network]) {
				t.Index = s.Index
				return t
			}
		}
	}
	return t
}
