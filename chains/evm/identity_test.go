package evm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
)

// startAnvilChain starts a bare anvil with chain id id.
func startAnvilChain(t *testing.T, id int64) *ethdev.Anvil {
	t.Helper()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := ethdev.StartAnvilChain(ctx, bin, t.TempDir(), 0, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}

// The node's chain id names its chain: a config on mainnet takes only
// chain id 1, and not from a development node (anvil keeps chain id 1 when
// it forks mainnet); testnet takes Sepolia, Holesky or Hoodi; regtest none
// of those (a private chain such as anvil's default 31337).
func TestVerifyChainByChainID(t *testing.T) {
	for _, c := range []struct {
		id   int64
		ok   string // the one chain setting it passes, "" for none
		says string
	}{
		{ethdev.AnvilChainID, "regtest", "chain id 31337 (a private chain)"},
		{int64(evm.SepoliaChainID), "testnet", "chain id 11155111 (the Sepolia testnet)"},
		{int64(evm.MainnetChainID), "", "chain id 1"},
	} {
		a := startAnvilChain(t, c.id)
		client := newClient(t, a.RPCURL, evm.TraceOff, nil, nil)
		id, err := client.ChainID(context.Background())
		if err != nil || int64(id) != c.id {
			t.Fatalf("ChainID = %d, %v; want %d", id, err, c.id)
		}
		for _, chain := range []string{"mainnet", "testnet", "regtest"} {
			err := client.VerifyChain(context.Background(), chain)
			if chain == c.ok {
				if err != nil {
					t.Errorf("chain id %d on %s: %v", c.id, chain, err)
				}
				continue
			}
			if !errors.Is(err, chains.ErrWrongChain) || !strings.Contains(err.Error(), c.says) ||
				!strings.Contains(err.Error(), "networks.ethereum.chain is "+chain) {
				t.Errorf("chain id %d on %s: %v, want ErrWrongChain saying %q", c.id, chain, err, c.says)
			}
		}
		if c.id == int64(evm.MainnetChainID) {
			err := client.VerifyChain(context.Background(), "mainnet")
			if !strings.Contains(err.Error(), "anvil/") || !strings.Contains(err.Error(), "development node") {
				t.Errorf("an anvil with chain id 1 on mainnet: %v, want it named a development node", err)
			}
		}
	}
	// Without a client version (a provider that hides it) chain id 1 is
	// mainnet; a production node's version passes.
	for _, v := range []string{"", "Geth/v1.17.10-stable/linux-amd64/go1.26", "erigon/3.0.0/linux-amd64/go1.24"} {
		if err := evm.CheckChain("mainnet", 1, v); err != nil {
			t.Errorf("chain id 1 from %q: %v", v, err)
		}
	}
	if err := evm.CheckChain("mainnet", 1, "HardhatNetwork/2.22.0/@ethereumjs/vm/6.0"); !errors.Is(err, chains.ErrWrongChain) {
		t.Errorf("Hardhat on mainnet: %v", err)
	}
}

// A daemon whose Ethereum node is replaced by one of another chain (an
// anvil with Sepolia's chain id behind a regtest config) stops that
// scanner at its cursor: the network is critical with a message naming
// the chain id and the configured chain, nothing is scanned, and new
// intents are refused.
func TestScannerStopsOnAnotherEthereumChain(t *testing.T) {
	s := newScan(t, startNode(t), evm.TraceOff, nil)
	s.mine(2)
	s.sync()
	before, err := s.Sink.Cursor(context.Background(), payment.Ethereum)
	if err != nil {
		t.Fatal(err)
	}
	sepolia := startAnvilChain(t, int64(evm.SepoliaChainID))
	if err := sepolia.Mine(context.Background(), int(before.Height)+20); err != nil {
		t.Fatal(err)
	}
	other := newClient(t, sepolia.RPCURL, evm.TraceOff, s.n.tokens, nil)
	msg := s.RunUntilCritical(payment.Ethereum, other)
	for _, want := range []string{"chain id 11155111 (the Sepolia testnet)", "networks.ethereum.chain is regtest"} {
		if !strings.Contains(msg, want) {
			t.Errorf("critical %q does not say %q", msg, want)
		}
	}
	sc := s.NewScanner(payment.Ethereum, other)
	for range 2 {
		if err := sepolia.Mine(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.Step(context.Background()); !errors.Is(err, chains.ErrWrongChain) {
			t.Fatalf("step on Sepolia's chain id: %v, want ErrWrongChain", err)
		}
	}
	if after, _ := s.Sink.Cursor(context.Background(), payment.Ethereum); after.Height != before.Height || after.Hash != before.Hash {
		t.Fatalf("the cursor moved from %d to %d on another chain", before.Height, after.Height)
	}
	status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-SEP", "amount_usd": "5.00", "method": "ETH"})
	if status != 503 || !strings.Contains(string(body), "critical") || !strings.Contains(string(body), "11155111") {
		t.Fatalf("an ETH intent while the node is Sepolia's: %d %s", status, body)
	}
}

// A provider that refuses web3_clientVersion (a JSON-RPC error, or HTTP
// 403 from a method filter) leaves the software unknown: chain id 1 is then
// mainnet. A provider failing outright (5xx) fails the check, to be asked
// again.
func TestClientVersionRefusedByAProvider(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		ok     bool
	}{
		{200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"the method web3_clientVersion does not exist/is not available"}}`, true},
		{403, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"method not allowed"}}`, true},
		{502, `bad gateway`, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			switch req.Method {
			case "eth_chainId":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
			case "eth_blockNumber":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x10"}`, req.ID)
			default:
				w.WriteHeader(c.status)
				if strings.Contains(c.body, "%s") {
					fmt.Fprintf(w, c.body, req.ID)
				} else {
					fmt.Fprint(w, c.body)
				}
			}
		}))
		client := newClient(t, srv.URL, evm.TraceOff, nil, nil)
		err := client.VerifyChain(context.Background(), "mainnet")
		if c.ok && err != nil {
			t.Errorf("web3_clientVersion answered %d: %v, want chain id 1 accepted", c.status, err)
		}
		if !c.ok && (err == nil || errors.Is(err, chains.ErrWrongChain)) {
			t.Errorf("web3_clientVersion answered %d: %v, want a failure to ask", c.status, err)
		}
		srv.Close()
	}
}
