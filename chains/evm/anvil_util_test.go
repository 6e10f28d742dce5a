package evm_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/ethdev"
)

// estimate returns the gas estimate of a successful call, the base for the
// explicit gas of a transaction that will revert (never hard-coded).
func estimate(t *testing.T, n *node, to common.Address, c *contracts.Contract, method string, args ...any) uint64 {
	t.Helper()
	data, err := c.Call(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	gas, err := n.Eth.EstimateGas(context.Background(), ethereum.CallMsg{From: ethdev.AnvilDevAccount, To: &to, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return gas
}

func callMsgTo(to common.Address, value *big.Int) ethereum.CallMsg {
	return ethereum.CallMsg{From: ethdev.AnvilDevAccount, To: &to, Value: value}
}
