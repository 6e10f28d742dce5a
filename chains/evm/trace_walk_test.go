package evm_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
)

// chain returns depth nested calls through addr(5), the deepest one paying
// value to to.
func chain(depth int, to common.Address, value *big.Int) genCall {
	c := genCall{To: to, Value: value}
	for range depth - 1 {
		c = genCall{To: addr(5), Value: big.NewInt(0), Calls: []genCall{c}}
	}
	return c
}

// The call-tree walk records SELFDESTRUCT frames (but not a contract
// destroying itself to itself: nothing moves) and frames below depth 8,
// numbered after the first 8 levels so that the keys of shallower transfers
// are what they were when deeper frames were not walked.
func TestTraceWalkSelfdestructAndDeepFrames(t *testing.T) {
	payee := addr(42)
	g := genBlock{Number: 12, Parent: common.Hash{3}, Txs: []genTx{
		{To: &addr1, Internal: []genCall{
			{Type: "SELFDESTRUCT", To: payee, Value: big.NewInt(50)},                // n=0 → -2
			{Type: "SELFDESTRUCT", From: &payee, To: payee, Value: big.NewInt(51)},  // n=1 → to itself
			chain(12, payee, big.NewInt(52)),                                        // depths 1…8 n=2…9; 9…12 last: n=12…15 → -17
			{To: payee, Value: big.NewInt(53)},                                      // n=10 → -12, as before
			{Type: "SELFDESTRUCT", To: payee, Value: big.NewInt(54), Error: "boom"}, // n=11 → failed
		}},
	}}
	f := newFakeNode()
	g.install(t, f)
	c := newClient(t, f.start(t), evm.TraceOn, mainnetTokens, nil)
	b, err := c.Block(context.Background(), 12, watch(payee))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range b.Transfers {
		got = append(got, fmt.Sprintf("%s/%d/%s/%s", tr.TxID, tr.Index, tr.Asset, tr.Amount))
	}
	tx := g.txHash(0).Hex()
	want := []string{tx + "/-2/native/50", tx + "/-12/native/53", tx + "/-17/native/52"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("transfers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A trace nested deeper than the EVM allows (1024) is not a real trace:
// the block fails as an invalid response instead of recursing on.
func TestTraceWalkRefusesImpossibleDepth(t *testing.T) {
	payee := addr(42)
	g := genBlock{Number: 12, Parent: common.Hash{3}, Txs: []genTx{
		{To: &addr1, Internal: []genCall{chain(1030, payee, big.NewInt(1))}},
	}}
	f := newFakeNode()
	g.install(t, f)
	c := newClient(t, f.start(t), evm.TraceOn, mainnetTokens, nil)
	if _, err := c.Block(context.Background(), 12, watch(payee)); !errors.Is(err, chains.ErrInvalidResponse) {
		t.Fatalf("a 1030-deep trace: %v, want ErrInvalidResponse", err)
	}
}
