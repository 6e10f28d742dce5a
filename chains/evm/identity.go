package evm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paywatch/paywatch/chains"
)

// Ethereum chain ids (EIP-155) the chain settings are checked against.
const (
	MainnetChainID uint64 = 1
	SepoliaChainID uint64 = 11155111
	HoleskyChainID uint64 = 17000
	HoodiChainID   uint64 = 560048
)

// publicChains names the chain ids of Ethereum mainnet and its public
// testnets: a testnet config wants one of the testnets, a regtest config
// none of them.
var publicChains = map[uint64]string{
	MainnetChainID: "Ethereum mainnet",
	SepoliaChainID: "the Sepolia testnet",
	HoleskyChainID: "the Holesky testnet",
	HoodiChainID:   "the Hoodi testnet",
}

// devNodes are the web3_clientVersion prefixes of development nodes. A fork
// of mainnet (anvil --fork-url, Hardhat's forking) keeps chain id 1, so on
// mainnet the node's software is checked too: coins there are minted at
// will.
var devNodes = []string{"anvil/", "HardhatNetwork/", "Ganache/", "EthereumJS TestRPC/"}

var _ chains.ChainVerifier = (*Client)(nil)

// ChainID returns the node's EIP-155 chain id (eth_chainId).
func (c *Client) ChainID(ctx context.Context) (uint64, error) {
	var id hexutil.Uint64
	if err := c.rpc.CallContext(ctx, &id, "eth_chainId"); err != nil {
		return 0, classify(err, "eth_chainId")
	}
	return uint64(id), nil
}

// ClientVersion returns the node's software (web3_clientVersion), "" when
// the node or its provider does not answer that method (a JSON-RPC error,
// or an HTTP 4xx from a provider that filters methods).
func (c *Client) ClientVersion(ctx context.Context) (string, error) {
	var v string
	err := c.rpc.CallContext(ctx, &v, "web3_clientVersion")
	var rerr rpc.Error
	var herr rpc.HTTPError
	if errors.As(err, &rerr) || (errors.As(err, &herr) && herr.StatusCode >= 400 && herr.StatusCode < 500) {
		return "", nil // not found or not allowed: nothing to learn
	}
	if err != nil {
		return "", classify(err, "web3_clientVersion")
	}
	return v, nil
}

// VerifyChain checks the node's chain id against chain, and on mainnet that
// the node is not a development node (CheckChain).
func (c *Client) VerifyChain(ctx context.Context, chain string) error {
	id, err := c.ChainID(ctx)
	if err != nil {
		return err
	}
	version := ""
	if chain == "mainnet" {
		if version, err = c.ClientVersion(ctx); err != nil {
			return err
		}
	}
	return CheckChain(chain, id, version)
}

// CheckChain decides whether a node with chain id id running clientVersion
// ("" when unknown) may serve a config on chain: mainnet wants chain id 1
// on a node that is not a development node (anvil, Hardhat, Ganache: a
// fork of mainnet keeps chain id 1); testnet wants Sepolia, Holesky or
// Hoodi; regtest wants anything but mainnet and those testnets. A mismatch
// wraps chains.ErrWrongChain and names both sides.
func CheckChain(chain string, id uint64, clientVersion string) error {
	name, public := publicChains[id]
	if !public {
		name = "a private chain"
	}
	got := fmt.Sprintf("chain id %d (%s)", id, name)
	switch chain {
	case "mainnet":
		if id != MainnetChainID {
			return fmt.Errorf("ethereum: %w: the node reports %s, and networks.ethereum.chain is mainnet (chain id %d)",
				chains.ErrWrongChain, got, MainnetChainID)
		}
		for _, p := range devNodes {
			if strings.HasPrefix(clientVersion, p) {
				return fmt.Errorf("ethereum: %w: the node reports chain id 1 but runs %q, a development node (a fork of mainnet "+
					"keeps chain id 1 and mints coins at will), and networks.ethereum.chain is mainnet", chains.ErrWrongChain, clientVersion)
			}
		}
	case "testnet":
		if !public || id == MainnetChainID {
			return fmt.Errorf("ethereum: %w: the node reports %s, and networks.ethereum.chain is testnet (Sepolia %d, Holesky %d or Hoodi %d)",
				chains.ErrWrongChain, got, SepoliaChainID, HoleskyChainID, HoodiChainID)
		}
	case "regtest":
		if public {
			return fmt.Errorf("ethereum: %w: the node reports %s, and networks.ethereum.chain is regtest (a private development chain)",
				chains.ErrWrongChain, got)
		}
	default:
		return fmt.Errorf("ethereum: chain %q: want mainnet, testnet or regtest", chain)
	}
	return nil
}
