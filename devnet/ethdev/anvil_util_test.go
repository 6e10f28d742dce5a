package ethdev_test

import (
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet/ethdev"
)

func callMsg(to common.Address, data []byte) ethereum.CallMsg {
	return ethereum.CallMsg{From: ethdev.AnvilDevAccount, To: &to, Data: data}
}

func mustCall(t *testing.T, method string, args ...any) []byte {
	t.Helper()
	data, err := contracts.TestToken.Call(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
