package solanafake

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/chains/chainstest"
)

// Produce mines one slot every interval until ctx ends, like a cluster's
// 400 ms slots, and returns ctx's error.
func (n *Node) Produce(ctx context.Context, interval time.Duration) error {
	return chainstest.Produce(ctx, interval, func() { n.Mine(1) })
}

// ControlHandler returns the sandbox's remote control of the node, to be
// served on its own listener (never mixed into the JSON-RPC endpoint). All
// calls are POST with a JSON body; keys are base58 32-byte public keys;
// lamports is a decimal string:
//
//	/mine     {"slots": 1}                                      -> {"tip": 123}
//	/pay/sol  {"from": "…", "to": "…", "lamports": "1000000"}   -> {"signature": "…"}
//
// A payer the node has never seen starts with 1,000 SOL (there is no
// airdrop); a payment above the payer's balance is refused. The payment is
// included in the next slot (Produce or /mine).
func (n *Node) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(path string, f func(req solControl) (any, error)) { chainstest.ControlEndpoint(mux, path, f) }
	handle("/mine", func(req solControl) (any, error) {
		if req.Slots < 1 || req.Slots > 10_000 {
			return nil, fmt.Errorf("slots %d: want 1..10000", req.Slots)
		}
		n.Mine(req.Slots)
		return map[string]uint64{"tip": n.Tip()}, nil
	})
	handle("/pay/sol", func(req solControl) (any, error) {
		from, err := publicKey("from", req.From)
		if err != nil {
			return nil, err
		}
		to, err := publicKey("to", req.To)
		if err != nil {
			return nil, err
		}
		lamports, err := strconv.ParseUint(req.Lamports, 10, 64)
		if err != nil || lamports == 0 {
			return nil, fmt.Errorf("lamports %q: want a positive integer", req.Lamports)
		}
		if from == to {
			return nil, fmt.Errorf("from and to are the same account")
		}
		if bal := n.spendable(from); lamports > bal || bal-lamports < Fee {
			return nil, fmt.Errorf("insufficient lamports: %s has %d, needs %d plus the %d fee", req.From, bal, lamports, Fee)
		}
		return map[string]string{"signature": n.PaySOL(from, to, lamports, false, false)}, nil
	})
	return mux
}

// spendable is what from can still pay: its balance (startBalance for a
// payer never seen) minus its queued payments and their fees.
func (n *Node) spendable(from [32]byte) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := base58.Encode(from[:])
	bal, ok := n.balances[key]
	if !ok {
		bal = startBalance
	}
	for _, p := range n.pending {
		if p.from != key {
			continue
		}
		if owed := p.lamports + Fee; owed < bal {
			bal -= owed
		} else {
			return 0
		}
	}
	return bal
}

// solControl is the body of every control call; each uses its own fields.
type solControl struct {
	Slots    int    `json:"slots"`
	From     string `json:"from"`
	To       string `json:"to"`
	Lamports string `json:"lamports"`
}

// publicKey decodes a base58 32-byte public key.
func publicKey(field, s string) ([32]byte, error) {
	var k [32]byte
	b, err := base58.Decode(s)
	if err != nil || len(b) != 32 {
		return k, fmt.Errorf("%s %q: want a base58 32-byte public key", field, s)
	}
	copy(k[:], b)
	return k, nil
}

// Reseed sets the counter the node derives block hashes and signatures
// from. Two nodes reseeded with values far apart (such as start times in
// nanoseconds) never derive the same signature, so a sandbox that restarts
// its in-memory cluster cannot repeat a signature that a database recorded
// from an earlier run.
func (n *Node) Reseed(seed uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq = seed
}
