package solana

import (
	"context"
	"fmt"

	"github.com/paywatch/paywatch/chains"
)

// Genesis hashes (getGenesisHash) of Solana's public clusters.
const (
	MainnetGenesis = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
	DevnetGenesis  = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
	TestnetGenesis = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
)

// publicGenesis names the public clusters by genesis hash.
var publicGenesis = map[string]string{
	MainnetGenesis: "Solana mainnet-beta",
	DevnetGenesis:  "Solana devnet",
	TestnetGenesis: "Solana testnet",
}

var (
	_ chains.ChainVerifier = (*Client)(nil)
	_ chains.ChainVerifier = (*ModeSource)(nil)
)

// GenesisHash returns the node's genesis hash, which names its cluster.
func (c *Client) GenesisHash(ctx context.Context) (string, error) {
	var hash string
	err := c.call(ctx, "getGenesisHash", nil, func(body []byte) error {
		found, err := decodeEnvelope("getGenesisHash", body, &hash, func(err error) error {
			return fmt.Errorf("solana: getGenesisHash: %w: %w", chains.ErrInvalidResponse, err)
		})
		if err == nil && (!found || len(hash) < 32 || len(hash) > 44) {
			return fmt.Errorf("solana: getGenesisHash: %w: %q is not a hash", chains.ErrInvalidResponse, hash)
		}
		return err
	})
	if err != nil {
		return "", classify(err, "getGenesisHash", 0)
	}
	return hash, nil
}

// VerifyChain checks the node's genesis hash against chain (CheckGenesis).
func (c *Client) VerifyChain(ctx context.Context, chain string) error {
	hash, err := c.GenesisHash(ctx)
	if err != nil {
		return err
	}
	return CheckGenesis(chain, hash)
}

// CheckGenesis decides whether a node of genesis hash may serve a config on
// chain: mainnet wants mainnet-beta's, testnet devnet's or testnet's,
// regtest any other (a local validator). A mismatch wraps
// chains.ErrWrongChain and names both sides.
func CheckGenesis(chain, hash string) error {
	name, public := publicGenesis[hash]
	if !public {
		name = "a private cluster"
	}
	got := fmt.Sprintf("genesis hash %s (%s)", hash, name)
	switch chain {
	case "mainnet":
		if hash != MainnetGenesis {
			return fmt.Errorf("solana: %w: the node reports %s, and networks.solana.chain is mainnet (genesis hash %s)",
				chains.ErrWrongChain, got, MainnetGenesis)
		}
	case "testnet":
		if !public || hash == MainnetGenesis {
			return fmt.Errorf("solana: %w: the node reports %s, and networks.solana.chain is testnet (devnet or testnet)", chains.ErrWrongChain, got)
		}
	case "regtest":
		if public {
			return fmt.Errorf("solana: %w: the node reports %s, and networks.solana.chain is regtest (a local validator)", chains.ErrWrongChain, got)
		}
	default:
		return fmt.Errorf("solana: chain %q: want mainnet, testnet or regtest", chain)
	}
	return nil
}
