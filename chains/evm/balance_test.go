package evm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
)

// balanceNode answers eth_blockNumber and, for eth_getBalance, the raw
// result of answer (per request) — or drops the element when it is "".
type balanceNode struct {
	answer func(params []json.RawMessage) string
	params [][]json.RawMessage
}

func (b *balanceNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	type req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	var reqs []req
	batch := strings.HasPrefix(strings.TrimSpace(string(body)), "[")
	if batch {
		json.Unmarshal(body, &reqs)
	} else {
		var one req
		json.Unmarshal(body, &one)
		reqs = []req{one}
	}
	var out []string
	for _, q := range reqs {
		result := `"0x10"`
		if q.Method == "eth_getBalance" {
			b.params = append(b.params, q.Params)
			if result = b.answer(q.Params); result == "" {
				continue
			}
		}
		out = append(out, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"result":`+result+`}`)
	}
	w.Header().Set("Content-Type", "application/json")
	if batch {
		io.WriteString(w, "["+strings.Join(out, ",")+"]")
	} else if len(out) == 1 {
		io.WriteString(w, out[0])
	}
}

func TestNativeBalances(t *testing.T) {
	ctx := context.Background()
	at := chains.BlockRef{Height: 16, Hash: common.HexToHash("0xab").Hex()}
	keys := [][]byte{common.HexToAddress("0x01").Bytes(), common.HexToAddress("0x02").Bytes()}

	t.Run("PinsTheBlockHash", func(t *testing.T) {
		node := &balanceNode{answer: func([]json.RawMessage) string { return `"0x2a"` }}
		srv := httptest.NewServer(node)
		defer srv.Close()
		c := newClient(t, srv.URL, evm.TraceOff, nil, nil)
		if !c.NeedsBalanceCheck() {
			t.Fatal("an untraced client does not ask for the balance check")
		}
		got, err := c.NativeBalances(ctx, keys, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Cmp(big.NewInt(42)) != 0 || got[1].Cmp(big.NewInt(42)) != 0 {
			t.Fatalf("balances %v", got)
		}
		if len(node.params) != 2 {
			t.Fatalf("%d eth_getBalance calls, want 2", len(node.params))
		}
		var block struct {
			BlockHash        common.Hash `json:"blockHash"`
			RequireCanonical bool        `json:"requireCanonical"`
		}
		if err := json.Unmarshal(node.params[0][1], &block); err != nil || block.BlockHash.Hex() != at.Hash || !block.RequireCanonical {
			t.Fatalf("block parameter %s (%v)", node.params[0][1], err)
		}
	})

	for name, answer := range map[string]string{
		"NotHex":   `"zz"`,
		"Null":     `null`,
		"Number":   `42`,
		"Negative": `"-0x1"`,
		"Missing":  ``,
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			node := &balanceNode{answer: func([]json.RawMessage) string {
				n++
				if n == 2 {
					return answer
				}
				return `"0x1"`
			}}
			srv := httptest.NewServer(node)
			defer srv.Close()
			c := newClient(t, srv.URL, evm.TraceOff, nil, nil)
			_, err := c.NativeBalances(ctx, keys, at)
			if !errors.Is(err, chains.ErrInvalidResponse) {
				t.Fatalf("answer %s: error %v, want ErrInvalidResponse", answer, err)
			}
		})
	}

	t.Run("BadInput", func(t *testing.T) {
		node := &balanceNode{answer: func([]json.RawMessage) string { return `"0x1"` }}
		srv := httptest.NewServer(node)
		defer srv.Close()
		c := newClient(t, srv.URL, evm.TraceOff, nil, nil)
		if _, err := c.NativeBalances(ctx, [][]byte{{1, 2, 3}}, at); err == nil {
			t.Fatal("a 3-byte key was accepted")
		}
		if _, err := c.NativeBalances(ctx, keys, chains.BlockRef{Height: 16, Hash: "0x1234"}); err == nil {
			t.Fatal("a short block hash was accepted")
		}
		if len(node.params) != 0 {
			t.Fatalf("bad input reached the node: %d calls", len(node.params))
		}
	})
}
