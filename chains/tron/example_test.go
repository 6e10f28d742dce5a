package tron_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http/httptest"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
)

// ExampleClient_Block reads a USDT TRC-20 payment to a watched address from
// a fake node.
func ExampleClient_Block() {
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()

	usdt, _ := tron.ParseAddress("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	customer, _ := tron.ParseAddress("TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7")
	deposit, _ := tron.ParseAddress("TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt")
	node.PayTRC20(usdt, customer, deposit, big.NewInt(532_079_999), true)
	node.Mine(1)

	c, err := tron.New(tron.Config{URL: srv.URL, USDTContract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"})
	if err != nil {
		panic(err)
	}
	watched := chains.NewWatchSet(1)
	watched.Add(deposit)
	b, err := c.Block(context.Background(), 1, watched)
	if err != nil {
		panic(err)
	}
	for _, t := range b.Transfers {
		fmt.Println(t.Asset, t.Amount, t.Address, t.Index)
	}
	// Output: USDT 532079999 TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt 0
}
