package contracts

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

var (
	//go:embed build/TestToken.abi.json
	testTokenABI string
	//go:embed build/TestToken.bin
	testTokenBin string
	//go:embed build/Forwarder.abi.json
	forwarderABI string
	//go:embed build/Forwarder.bin
	forwarderBin string
	//go:embed build/Reverter.abi.json
	reverterABI string
	//go:embed build/Reverter.bin
	reverterBin string
	//go:embed build/Selfdestructor.abi.json
	selfdestructorABI string
	//go:embed build/Selfdestructor.bin
	selfdestructorBin string
	//go:embed build/Relay.abi.json
	relayABI string
	//go:embed build/Relay.bin
	relayBin string
)

// Contract is one compiled contract: its ABI and its creation bytecode.
type Contract struct {
	// Name is the Solidity contract name.
	Name string
	// ABI is the parsed interface.
	ABI abi.ABI
	// Bytecode is the creation code, without constructor arguments.
	Bytecode []byte
}

// DeployData returns the creation code followed by the ABI-encoded
// constructor arguments: the data of a contract-creation transaction.
func (c *Contract) DeployData(args ...any) ([]byte, error) {
	packed, err := c.ABI.Pack("", args...)
	if err != nil {
		return nil, fmt.Errorf("%s constructor: %w", c.Name, err)
	}
	return append(append([]byte(nil), c.Bytecode...), packed...), nil
}

// Call returns the calldata of method with args.
func (c *Contract) Call(method string, args ...any) ([]byte, error) {
	data, err := c.ABI.Pack(method, args...)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", c.Name, method, err)
	}
	return data, nil
}

// TestToken is the test ERC-20. Constructor: (string name, string symbol,
// uint8 decimals). Methods: mint(address,uint256), transfer, transferFrom,
// approve, allowance, balanceOf, transferThenRevert(address,uint256).
var TestToken = mustLoad("TestToken", testTokenABI, testTokenBin)

// Forwarder forwards ETH through internal calls: forward(address),
// forwardTwice(address), forwardAndSwallow(address).
var Forwarder = mustLoad("Forwarder", forwarderABI, forwarderBin)

// Reverter rejects every ETH payment (its receive function reverts).
var Reverter = mustLoad("Reverter", reverterABI, reverterBin)

// Selfdestructor sends its balance to a beneficiary by SELFDESTRUCT.
// Constructor: (address to, bool now): with now it selfdestructs during its
// creation (destroyed, post-Cancun too). Methods: destroy(address) (after
// Cancun only the balance moves); receive keeps plain payments.
var Selfdestructor = mustLoad("Selfdestructor", selfdestructorABI, selfdestructorBin)

// Relay forwards ETH through nested internal calls: relay(address, uint256
// depth) calls itself depth times before paying the address;
// createAndDestroy(address) pays it from a Selfdestructor created and
// destroyed inside the call.
var Relay = mustLoad("Relay", relayABI, relayBin)

// TokenDecimals is the decimals value the tests and the sandbox deploy
// TestToken with: USDT and USDC both have 6.
const TokenDecimals uint8 = 6

func mustLoad(name, abiJSON, binHex string) *Contract {
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	if err != nil {
		panic(fmt.Sprintf("contracts: %s ABI: %v", name, err))
	}
	code := common.FromHex(strings.TrimSpace(binHex))
	if len(code) == 0 {
		panic(fmt.Sprintf("contracts: %s bytecode is empty", name))
	}
	return &Contract{Name: name, ABI: parsed, Bytecode: code}
}
