package tronfake

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil/base58"

	"github.com/paywatch/paywatch/chains/chainstest"
)

// Produce mines one block every interval until ctx ends, like the real
// chain's 3-second slots, and returns ctx's error.
func (n *Node) Produce(ctx context.Context, interval time.Duration) error {
	return chainstest.Produce(ctx, interval, func() { n.Mine(1) })
}

// ControlHandler returns the sandbox's remote control of the node, to be
// served on its own listener or prefix (never mixed into the node API, whose
// unknown paths must stay 404). All calls are POST with a JSON body;
// accounts are base58check T… or 41… hex; amounts are decimal strings in
// base units:
//
//	/mine   {"blocks": 1}
//	/pay/trx   {"from": "T…", "to": "T…", "sun": "1000000", "fail": false} -> {"txid": "…"}
//	/pay/trc20 {"contract": "T…", "from": "T…", "to": "T…", "amount": "5000000", "fail": false} -> {"txid": "…"}
//	/reorg  {"depth": 2}
//	/fail   {"kind": "429"}
func (n *Node) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(path string, f func(req control) (any, error)) { chainstest.ControlEndpoint(mux, path, f) }
	handle("/mine", func(req control) (any, error) {
		if req.Blocks < 1 || req.Blocks > 10_000 {
			return nil, fmt.Errorf("blocks %d: want 1..10000", req.Blocks)
		}
		n.Mine(req.Blocks)
		return map[string]uint64{"tip": n.Tip()}, nil
	})
	handle("/pay/trx", func(req control) (any, error) {
		from, to, err := accounts(req.From, req.To)
		if err != nil {
			return nil, err
		}
		sun, ok := new(big.Int).SetString(req.Sun, 10)
		if !ok || sun.Sign() <= 0 || !sun.IsInt64() {
			return nil, fmt.Errorf("sun %q: want a positive integer", req.Sun)
		}
		return map[string]string{"txid": n.PayTRX(from, to, sun.Int64(), !req.Fail)}, nil
	})
	handle("/pay/trc20", func(req control) (any, error) {
		from, to, err := accounts(req.From, req.To)
		if err != nil {
			return nil, err
		}
		contract, err := account(req.Contract)
		if err != nil {
			return nil, err
		}
		amount, ok := new(big.Int).SetString(req.Amount, 10)
		if !ok || amount.Sign() < 0 || amount.BitLen() > 256 {
			return nil, fmt.Errorf("amount %q: want a non-negative 256-bit integer", req.Amount)
		}
		return map[string]string{"txid": n.PayTRC20(contract, from, to, amount, !req.Fail)}, nil
	})
	handle("/reorg", func(req control) (any, error) {
		if err := n.Reorg(req.Depth); err != nil {
			return nil, err
		}
		return map[string]uint64{"tip": n.Tip()}, nil
	})
	handle("/fail", func(req control) (any, error) {
		if !failures[req.Kind] {
			return nil, fmt.Errorf("kind %q: unknown", req.Kind)
		}
		n.FailNext(req.Kind)
		return map[string]string{}, nil
	})
	return mux
}

// control is the body of every control call; each uses its own fields.
type control struct {
	Blocks   int     `json:"blocks"`
	Depth    int     `json:"depth"`
	Kind     Failure `json:"kind"`
	Contract string  `json:"contract"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Sun      string  `json:"sun"`
	Amount   string  `json:"amount"`
	Fail     bool    `json:"fail"`
}

func accounts(from, to string) ([]byte, []byte, error) {
	f, err := account(from)
	if err != nil {
		return nil, nil, err
	}
	t, err := account(to)
	if err != nil {
		return nil, nil, err
	}
	return f, t, nil
}

// account decodes a T… or 41… hex address to its 20 bytes.
func account(s string) ([]byte, error) {
	if len(s) == 42 && strings.HasPrefix(s, "41") {
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("address %q: %v", s, err)
		}
		return b[1:], nil
	}
	b, version, err := base58.CheckDecode(s)
	if err != nil || version != 0x41 || len(b) != 20 {
		return nil, fmt.Errorf("address %q: want T… base58check or 41… hex", s)
	}
	return b, nil
}
