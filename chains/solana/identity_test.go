package solana_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/payment"
)

// The node's genesis hash names its cluster: a config on mainnet takes only
// mainnet-beta's, testnet only devnet's or testnet's, regtest none of them
// (a local validator such as the fake, whose genesis is its own).
func TestVerifyChainByGenesisHash(t *testing.T) {
	for _, c := range []struct {
		genesis string // "" is the fake's own
		ok      string
		name    string
	}{
		{"", "regtest", "a private cluster"},
		{solana.MainnetGenesis, "mainnet", "Solana mainnet-beta"},
		{solana.DevnetGenesis, "testnet", "Solana devnet"},
		{solana.TestnetGenesis, "testnet", "Solana testnet"},
	} {
		node := solanafake.New()
		if c.genesis != "" {
			node.SetGenesisHash(c.genesis)
		}
		srv := httptest.NewServer(node)
		client, err := solana.New(solana.Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		hash, err := client.GenesisHash(context.Background())
		if err != nil || (c.genesis != "" && hash != c.genesis) || hash == "" {
			t.Fatalf("GenesisHash = %q, %v; want %q", hash, err, c.genesis)
		}
		src := solana.NewModeSource(client) // what the daemon scans with
		for _, chain := range []string{"mainnet", "testnet", "regtest"} {
			err := src.VerifyChain(context.Background(), chain)
			if chain == c.ok {
				if err != nil {
					t.Errorf("genesis %s on %s: %v", hash, chain, err)
				}
				continue
			}
			if !errors.Is(err, chains.ErrWrongChain) || !strings.Contains(err.Error(), hash) || !strings.Contains(err.Error(), c.name) ||
				!strings.Contains(err.Error(), "networks.solana.chain is "+chain) {
				t.Errorf("genesis %s (%s) on %s: %v, want ErrWrongChain naming both", hash, c.name, chain, err)
			}
		}
		srv.Close()
	}
}

// A Solana node that turns out to be devnet behind a regtest config stops
// the scanner at its cursor: the network is critical with a message naming
// the cluster and the configured chain, nothing is scanned, new intents are
// refused.
func TestScannerStopsOnAnotherSolanaCluster(t *testing.T) {
	s := newSolScan(t, solana.ModeBlock)
	before := s.cursor().Height
	s.node.SetGenesisHash(solana.DevnetGenesis)
	s.mine(5)
	msg := s.RunUntilCritical(payment.Solana, s.newSource())
	for _, want := range []string{solana.DevnetGenesis, "Solana devnet", "networks.solana.chain is regtest"} {
		if !strings.Contains(msg, want) {
			t.Errorf("critical %q does not say %q", msg, want)
		}
	}
	sc := s.NewScanner(payment.Solana, s.newSource())
	for range 2 {
		s.mine(3)
		if _, err := sc.Step(context.Background()); !errors.Is(err, chains.ErrWrongChain) {
			t.Fatalf("step on devnet: %v, want ErrWrongChain", err)
		}
	}
	if got := s.cursor().Height; got != before {
		t.Fatalf("the cursor moved from %d to %d on another cluster", before, got)
	}
	status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-DEV", "amount_usd": "5.00", "method": "SOL"})
	if status != 503 || !strings.Contains(string(body), "critical") || !strings.Contains(string(body), "devnet") {
		t.Fatalf("a SOL intent while the node is devnet: %d %s", status, body)
	}
}
