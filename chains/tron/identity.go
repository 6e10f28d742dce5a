package tron

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paywatch/paywatch/chains"
)

// Genesis block ids (wallet/getblockbynum {"num":0}) of Tron's public
// networks.
const (
	MainnetGenesis = "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc"
	NileGenesis    = "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc"
	ShastaGenesis  = "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e"
)

// publicGenesis names the public networks by genesis block id.
var publicGenesis = map[string]string{
	MainnetGenesis: "Tron mainnet",
	NileGenesis:    "the Nile testnet",
	ShastaGenesis:  "the Shasta testnet",
}

var _ chains.ChainVerifier = (*Client)(nil)

// GenesisBlockID returns the id of the node's block 0, which names its
// network.
func (c *Client) GenesisBlockID(ctx context.Context) (string, error) {
	body, err := c.post(ctx, "/wallet/getblockbynum", numBody(0))
	if err != nil {
		return "", fmt.Errorf("tron: genesis block: %w", err)
	}
	var b blockJSON
	if err := json.Unmarshal(body, &b); err != nil {
		return "", fmt.Errorf("tron: genesis block: %w: %v", chains.ErrInvalidResponse, err)
	}
	if len(b.BlockID) != 64 {
		return "", fmt.Errorf("tron: genesis block: %w: blockID %q", chains.ErrInvalidResponse, clip([]byte(b.BlockID)))
	}
	return b.BlockID, nil
}

// VerifyChain checks the node's genesis block id against chain
// (CheckGenesis) and, when the TRX method needs it, that the node writes
// internal transactions (checkInternalTx: ErrInternalTxNotSaved).
func (c *Client) VerifyChain(ctx context.Context, chain string) error {
	id, err := c.GenesisBlockID(ctx)
	if err != nil {
		return err
	}
	if err := CheckGenesis(chain, id); err != nil {
		return err
	}
	return c.checkInternalTx(ctx, id)
}

// CheckGenesis decides whether a node whose block 0 has id genesis may serve
// a config on chain: mainnet wants MainnetGenesis, testnet Nile's or
// Shasta's, regtest any other (a private network). A mismatch wraps
// chains.ErrWrongChain and names both sides.
func CheckGenesis(chain, genesis string) error {
	name, public := publicGenesis[genesis]
	if !public {
		name = "a private network"
	}
	got := fmt.Sprintf("genesis block %s (%s)", genesis, name)
	switch chain {
	case "mainnet":
		if genesis != MainnetGenesis {
			return fmt.Errorf("tron: %w: the node reports %s, and networks.tron.chain is mainnet (genesis block %s)",
				chains.ErrWrongChain, got, MainnetGenesis)
		}
	case "testnet":
		if !public || genesis == MainnetGenesis {
			return fmt.Errorf("tron: %w: the node reports %s, and networks.tron.chain is testnet (Nile or Shasta)", chains.ErrWrongChain, got)
		}
	case "regtest":
		if public {
			return fmt.Errorf("tron: %w: the node reports %s, and networks.tron.chain is regtest (a private network)", chains.ErrWrongChain, got)
		}
	default:
		return fmt.Errorf("tron: chain %q: want mainnet, testnet or regtest", chain)
	}
	return nil
}
