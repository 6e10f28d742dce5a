package tron_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/payment"
)

// The node's genesis block id names its network: a config on mainnet takes
// only mainnet's, testnet only Nile's or Shasta's, regtest neither (a
// private network such as the fake's own genesis).
func TestVerifyChainByGenesisBlockID(t *testing.T) {
	for _, c := range []struct {
		genesis string // "" is the fake's own
		ok      string
		name    string
	}{
		{"", "regtest", "a private network"},
		{tron.MainnetGenesis, "mainnet", "Tron mainnet"},
		{tron.NileGenesis, "testnet", "the Nile testnet"},
		{tron.ShastaGenesis, "testnet", "the Shasta testnet"},
	} {
		node := tronfake.New()
		if c.genesis != "" {
			if err := node.SetGenesisID(c.genesis); err != nil {
				t.Fatal(err)
			}
		}
		node.Mine(3)
		srv := httptest.NewServer(node)
		client, err := tron.New(tron.Config{URL: srv.URL, USDTContract: mainnetUSDT})
		if err != nil {
			t.Fatal(err)
		}
		id, err := client.GenesisBlockID(context.Background())
		if err != nil || (c.genesis != "" && id != c.genesis) || len(id) != 64 {
			t.Fatalf("GenesisBlockID = %q, %v; want %q", id, err, c.genesis)
		}
		for _, chain := range []string{"mainnet", "testnet", "regtest"} {
			err := client.VerifyChain(context.Background(), chain)
			if chain == c.ok {
				if err != nil {
					t.Errorf("genesis %s on %s: %v", id, chain, err)
				}
				continue
			}
			if !errors.Is(err, chains.ErrWrongChain) || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), c.name) ||
				!strings.Contains(err.Error(), "networks.tron.chain is "+chain) {
				t.Errorf("genesis %s (%s) on %s: %v, want ErrWrongChain naming both", id, c.name, chain, err)
			}
		}
		srv.Close()
	}
	if err := tronfake.New().SetGenesisID("nope"); err == nil {
		t.Fatal("SetGenesisID took a malformed id")
	}
}

// A Tron node swapped for one of another network (here Nile behind a
// regtest config) stops the scanner at its cursor: the network is
// critical with a message naming the node's genesis and the configured
// chain, nothing of that network is scanned, and new intents are refused.
func TestScannerStopsOnAnotherTronNetwork(t *testing.T) {
	s := newTronScan(t)
	before := s.cursor().Height
	nile := tronfake.New()
	if err := nile.SetGenesisID(tron.NileGenesis); err != nil {
		t.Fatal(err)
	}
	nile.Mine(int(before) + 40)
	s.proxy.node = nile
	msg := s.RunUntilCritical(payment.Tron, s.newClient())
	for _, want := range []string{tron.NileGenesis, "the Nile testnet", "networks.tron.chain is regtest"} {
		if !strings.Contains(msg, want) {
			t.Errorf("critical %q does not say %q", msg, want)
		}
	}
	sc := s.NewScanner(payment.Tron, s.newClient())
	for range 2 {
		nile.Mine(5)
		if _, err := sc.Step(context.Background()); !errors.Is(err, chains.ErrWrongChain) {
			t.Fatalf("step on Nile: %v, want ErrWrongChain", err)
		}
	}
	if got := s.cursor().Height; got != before {
		t.Fatalf("the cursor moved from %d to %d on another network", before, got)
	}
	status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-NILE", "amount_usd": "5.00", "method": "TRX"})
	if status != 503 || !strings.Contains(string(body), "critical") || !strings.Contains(string(body), "Nile") {
		t.Fatalf("a TRX intent while the node is on Nile: %d %s", status, body)
	}
}
