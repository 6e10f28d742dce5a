package contracts

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

func TestABIs(t *testing.T) {
	transfer := TestToken.ABI.Events["Transfer"]
	want := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	if transfer.ID != want {
		t.Fatalf("Transfer topic0 = %s, want %s", transfer.ID, want)
	}
	for _, m := range []string{"mint", "transfer", "transferFrom", "approve", "allowance", "balanceOf", "transferThenRevert", "decimals"} {
		if _, ok := TestToken.ABI.Methods[m]; !ok {
			t.Errorf("TestToken has no method %s", m)
		}
	}
	if _, ok := Forwarder.ABI.Methods["forward"]; !ok {
		t.Error("Forwarder has no forward method")
	}
	for c, ms := range map[*Contract][]string{Selfdestructor: {"destroy"}, Relay: {"relay", "createAndDestroy"}} {
		for _, m := range ms {
			if _, ok := c.ABI.Methods[m]; !ok {
				t.Errorf("%s has no method %s", c.Name, m)
			}
		}
	}
	if _, err := Selfdestructor.DeployData(common.HexToAddress("0x01"), true); err != nil {
		t.Error(err)
	}
	if !Reverter.ABI.HasReceive() {
		t.Error("Reverter has no receive function")
	}
	data, err := TestToken.DeployData("Tether USD", "USDT", TokenDecimals)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= len(TestToken.Bytecode) {
		t.Fatalf("deploy data %d bytes, bytecode %d bytes: constructor args missing", len(data), len(TestToken.Bytecode))
	}
	call, err := TestToken.Call("transfer", common.HexToAddress("0x01"), big.NewInt(5))
	if err != nil {
		t.Fatal(err)
	}
	if got := common.Bytes2Hex(call[:4]); got != "a9059cbb" {
		t.Fatalf("transfer selector %s, want a9059cbb", got)
	}
}
