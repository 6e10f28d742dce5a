package bitcoin

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// scripted serves a fixed status and body per RPC method; other methods get
// a 404 with a Core-style "Method not found" error.
func scripted(t *testing.T, replies map[string]struct {
	status int
	body   string
}) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body [4096]byte
		n, _ := r.Body.Read(body[:])
		req := string(body[:n])
		for method, rep := range replies {
			if strings.Contains(req, `"method":"`+method+`"`) {
				w.WriteHeader(rep.status)
				_, _ = w.Write([]byte(rep.body))
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":1}`))
	}))
	t.Cleanup(srv.Close)
	return "http://u:secret-pass@" + srv.Listener.Addr().String()
}

type reply = struct {
	status int
	body   string
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const someHash = `"000000000000000000042a943da8d706731d5d46190bdd96d0c009abc531da46"`

func TestBadResponses(t *testing.T) {
	ctx := context.Background()
	okHash := reply{200, `{"result":` + someHash + `,"error":null,"id":1}`}
	header := strings.Repeat("00", 80)
	cases := []struct {
		name    string
		replies map[string]reply
		want    []error // errors.Is targets
		not     []error
	}{
		{"garbage JSON", map[string]reply{"getblockhash": {200, `{"result": "0000`}},
			[]error{chains.ErrInvalidResponse}, []error{ErrTransient}},
		{"HTML page", map[string]reply{"getblockhash": {200, `<html>hello</html>`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"warmup error object (fixture)", map[string]reply{"getblockhash": {500, fixture(t, "core_pre22_rpc_in_warmup_response.json")}},
			[]error{ErrTransient}, []error{chains.ErrInvalidResponse, chains.ErrBlockNotFound}},
		{"height out of range (fixture)", map[string]reply{"getblockhash": {500, fixture(t, "core_pre22_get_block_hash_out_of_range_response.json")}},
			[]error{chains.ErrBlockNotFound}, []error{ErrTransient}},
		{"btcd height out of range", map[string]reply{"getblockhash": {200, `{"result":null,"error":{"code":-1,"message":"Block number out of range"},"id":1}`}},
			[]error{chains.ErrBlockNotFound}, nil},
		{"HTTP 500 without JSON", map[string]reply{"getblockhash": {500, `Internal Server Error`}},
			[]error{ErrTransient}, []error{chains.ErrInvalidResponse}},
		{"HTTP 503 work queue depth", map[string]reply{"getblockhash": {503, `Work queue depth exceeded`}},
			[]error{ErrTransient}, nil},
		{"HTTP 401", map[string]reply{"getblockhash": {401, ``}},
			[]error{ErrUnauthorized}, []error{ErrTransient}},
		{"null result", map[string]reply{"getblockhash": {200, `{"result":null,"error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"hash of wrong type", map[string]reply{"getblockhash": {200, `{"result":12,"error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"truncated hex", map[string]reply{"getblockhash": okHash, "getblock": {200, `{"result":"` + header[:101] + `","error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"non-hex", map[string]reply{"getblockhash": okHash, "getblock": {200, `{"result":"` + strings.Repeat("zz", 90) + `","error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"header only, no tx count", map[string]reply{"getblockhash": okHash, "getblock": {200, `{"result":"` + header + `","error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"block with a wrong hash", map[string]reply{"getblockhash": okHash, "getblock": {200, `{"result":"` + header + `00","error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"block hex cut mid-string", map[string]reply{"getblockhash": okHash, "getblock": {200, `{"result":"` + header}},
			[]error{chains.ErrInvalidResponse}, nil},
		{"getblock error object", map[string]reply{"getblockhash": okHash, "getblock": {500, `{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}`}},
			nil, []error{chains.ErrBlockNotFound, chains.ErrInvalidResponse, ErrTransient}},
		{"huge tx count", map[string]reply{"getblockhash": okHash, "getblock": {200, `{"result":"` + header + `ffffffffffffffffff","error":null,"id":1}`}},
			[]error{chains.ErrInvalidResponse}, nil},
	}
	for _, network := range []payment.Network{payment.Bitcoin, payment.Litecoin} {
		for _, tc := range cases {
			t.Run(string(network)+"/"+tc.name, func(t *testing.T) {
				c := newTestClient(t, network, Mainnet, scripted(t, tc.replies))
				_, err := c.Block(ctx, 766390, chains.NewWatchSet(0))
				if err == nil {
					t.Fatal("Block succeeded")
				}
				if !strings.Contains(err.Error(), "766390") {
					t.Errorf("error does not name the height: %v", err)
				}
				if strings.Contains(err.Error(), "secret-pass") {
					t.Errorf("error leaks the password: %v", err)
				}
				for _, target := range tc.want {
					if !errors.Is(err, target) {
						t.Errorf("error %q is not %q", err, target)
					}
				}
				for _, target := range tc.not {
					if errors.Is(err, target) {
						t.Errorf("error %q is %q", err, target)
					}
				}
			})
		}
	}
	t.Run("RPCError carries the code", func(t *testing.T) {
		c := newTestClient(t, payment.Bitcoin, Mainnet, scripted(t, map[string]reply{"getblockhash": okHash,
			"getblock": {500, `{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}`}}))
		_, err := c.Block(ctx, 1, chains.NewWatchSet(0))
		var re *RPCError
		if !errors.As(err, &re) || re.Code != -5 || re.Method != "getblock" {
			t.Fatalf("error %v, want an RPCError -5 from getblock", err)
		}
	})
}

func TestOversizedResponse(t *testing.T) {
	url := scripted(t, map[string]reply{"getblockcount": {200, `{"result":1` + strings.Repeat(" ", 2000) + `,"error":null,"id":1}`}})
	c, err := New(Config{Network: payment.Bitcoin, URL: url, MaxResponseBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tip(context.Background()); !errors.Is(err, chains.ErrInvalidResponse) {
		t.Fatalf("Tip = %v, want ErrInvalidResponse", err)
	}
}

func TestUnreachableNodeIsTransientAndHidesPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newTestClient(t, payment.Bitcoin, Mainnet, "http://u:secret-pass@"+addr)
	_, err = c.Tip(context.Background())
	if !errors.Is(err, ErrTransient) || strings.Contains(err.Error(), "secret-pass") {
		t.Fatalf("Tip = %v, want a transient error without the password", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Tip(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTransient) {
		t.Fatalf("Tip(cancelled) = %v, want context.Canceled", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Network: payment.Ethereum, URL: "http://u:p@h:1"},
		{Network: payment.Bitcoin, Chain: "signet", URL: "http://u:p@h:1"},
		{Network: payment.Bitcoin, URL: "ftp://u:p@h:1"},
		{Network: payment.Bitcoin, URL: "http://h:1"},
		{Network: payment.Bitcoin, URL: "http://u:secret-pass@h:1\x7f"},
	} {
		_, err := New(cfg)
		if err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		} else if strings.Contains(err.Error(), "secret-pass") {
			t.Errorf("New leaks the password: %v", err)
		}
	}
}

func TestCookieFile(t *testing.T) {
	cookie := t.TempDir() + "/.cookie"
	if err := os.WriteFile(cookie, []byte("u:secret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := fakeNode(t, func(method string, _ []json.RawMessage) rpcReply { return rpcReply{result: 42} })
	url = "http://" + url[strings.LastIndex(url, "@")+1:]
	c, err := New(Config{Network: payment.Bitcoin, URL: url, CookieFile: cookie})
	if err != nil {
		t.Fatal(err)
	}
	if tip, err := c.Tip(context.Background()); err != nil || tip != 42 {
		t.Fatalf("Tip = %d, %v", tip, err)
	}
}

func TestHealth(t *testing.T) {
	info := fixture(t, "core_pre22_get_blockchain_info_response.json")
	ctx := context.Background()
	mainnet := newTestClient(t, payment.Bitcoin, Mainnet, scripted(t, map[string]reply{"getblockchaininfo": {200, info}}))
	if err := mainnet.Health(ctx); err != nil {
		t.Fatalf("Health(main) = %v", err)
	}
	regtest := newTestClient(t, payment.Bitcoin, Regtest, scripted(t, map[string]reply{"getblockchaininfo": {200, info}}))
	if err := regtest.Health(ctx); !errors.Is(err, ErrWrongChain) {
		t.Fatalf("Health(regtest vs main) = %v, want ErrWrongChain", err)
	}
	// The scanner's check (VerifyChain) is the chain alone: a mainnet node
	// is refused on regtest and testnet whatever its sync state, and the
	// error names both chains.
	for _, chain := range []string{Regtest, Testnet} {
		if err := mainnet.VerifyChain(ctx, chain); !errors.Is(err, chains.ErrWrongChain) ||
			!strings.Contains(err.Error(), `"main"`) || !strings.Contains(err.Error(), "networks.bitcoin.chain is "+chain) {
			t.Fatalf("VerifyChain(%s) of a mainnet node = %v, want chains.ErrWrongChain naming both", chain, err)
		}
	}
	if err := mainnet.VerifyChain(ctx, Mainnet); err != nil {
		t.Fatalf("VerifyChain(mainnet) of a mainnet node = %v", err)
	}
	ibd := strings.Replace(info, `"initialblockdownload": false`, `"initialblockdownload": true`, 1)
	syncing := newTestClient(t, payment.Bitcoin, Mainnet, scripted(t, map[string]reply{"getblockchaininfo": {200, ibd}}))
	if err := syncing.Health(ctx); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Health(IBD) = %v, want ErrNotReady", err)
	}
	warm := newTestClient(t, payment.Bitcoin, Mainnet, scripted(t, map[string]reply{"getblockchaininfo": {500, fixture(t, "core_pre22_rpc_in_warmup_response.json")}}))
	if err := warm.Health(ctx); !errors.Is(err, ErrTransient) {
		t.Fatalf("Health(warmup) = %v, want ErrTransient", err)
	}
}

func TestPendingBadTransaction(t *testing.T) {
	const txid = "7582e83543dfc51b15fc49f847c9a558674a6cd157c4370b3ad22631b721d72d"
	for name, rawHex := range map[string]string{
		"truncated":  "0100000001",
		"not hex":    "0100zz",
		"wrong txid": "01000000000000000000",
	} {
		t.Run(name, func(t *testing.T) {
			url := fakeNode(t, func(method string, _ []json.RawMessage) rpcReply {
				if method == "getrawmempool" {
					return rpcReply{result: []string{txid}}
				}
				return rpcReply{result: rawHex}
			})
			c := newTestClient(t, payment.Bitcoin, Mainnet, url)
			_, err := c.Pending(context.Background(), chains.NewWatchSet(0))
			if !errors.Is(err, chains.ErrInvalidResponse) || !strings.Contains(err.Error(), txid) {
				t.Fatalf("Pending = %v, want ErrInvalidResponse naming the txid", err)
			}
		})
	}
}
