package bitcoin

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// TestHeaderIsTwoSmallCalls: a walk-back step (Header) is getblockhash and
// getblockheader (80 bytes), never getblock; a header that does not hash to
// the hash asked for is invalid, and above the tip is not found.
func TestHeaderIsTwoSmallCalls(t *testing.T) {
	var header [80]byte
	header[0] = 2
	for i := 4; i < 36; i++ {
		header[i] = byte(i) // the parent hash, internal byte order
	}
	hash := displayHash(sha256d(header[:]))
	served := hex.EncodeToString(header[:])
	var mu sync.Mutex
	calls := map[string]int{}
	url := fakeNode(t, func(method string, params []json.RawMessage) rpcReply {
		mu.Lock()
		calls[method]++
		mu.Unlock()
		switch method {
		case "getblockhash":
			if string(params[0]) == "7" {
				return rpcReply{result: hash}
			}
			return rpcReply{code: codeInvalidParameter, msg: "Block height out of range"}
		case "getblockheader":
			mu.Lock()
			defer mu.Unlock()
			return rpcReply{result: served}
		}
		return rpcReply{code: -32601, msg: "Method not found"}
	})
	c := newTestClient(t, payment.Bitcoin, Regtest, url)
	ctx := context.Background()
	ref, err := c.Header(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	var parent [32]byte
	copy(parent[:], header[4:36])
	if want := (chains.BlockRef{Height: 7, Hash: hash, Parent: displayHash(parent)}); ref != want {
		t.Fatalf("Header = %+v, want %+v", ref, want)
	}
	if len(calls) != 2 || calls["getblockhash"] != 1 || calls["getblockheader"] != 1 {
		t.Fatalf("calls per walk-back step: %v, want one getblockhash and one getblockheader", calls)
	}
	if _, err := c.Header(ctx, 8); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Header above the tip = %v, want ErrBlockNotFound", err)
	}
	header[0] = 3 // no longer hashes to hash
	mu.Lock()
	served = hex.EncodeToString(header[:])
	mu.Unlock()
	if _, err := c.Header(ctx, 7); !errors.Is(err, chains.ErrInvalidResponse) {
		t.Fatalf("Header of a header hashing elsewhere = %v, want ErrInvalidResponse", err)
	}
}
