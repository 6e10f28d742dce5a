package solana

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/chains/solana/solanafake"
)

// fake is a solanafake node behind an HTTP server with a Client on it.
type fake struct {
	node   *solanafake.Node
	srv    *httptest.Server
	client *Client
}

func newFake(t *testing.T, cfg Config) *fake {
	t.Helper()
	node := solanafake.New()
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	cfg.URL = srv.URL
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fake{node: node, srv: srv, client: c}
}

// rpc posts a raw JSON-RPC body and returns the HTTP status and the body.
func (f *fake) rpc(t *testing.T, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(f.srv.URL, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// rpcError posts body and returns the JSON-RPC error object it must carry.
func (f *fake) rpcError(t *testing.T, body string) rpcErrorBody {
	t.Helper()
	_, out := f.rpc(t, body)
	var resp struct {
		Error  *rpcErrorBody   `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if resp.Error == nil {
		t.Fatalf("request %s: want an error, got %s", body, out)
	}
	return *resp.Error
}

func newKey(t testing.TB) [32]byte {
	t.Helper()
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	return k
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// result extracts "result" from a captured JSON-RPC response.
func result(t testing.TB, resp []byte) []byte {
	t.Helper()
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(resp, &env); err != nil || env.Result == nil {
		t.Fatalf("not a JSON-RPC response: %v", err)
	}
	return env.Result
}

// watch is a chains.Watched over base58 addresses.
func watch(t testing.TB, addrs ...string) keySet {
	t.Helper()
	w := keySet{}
	for _, a := range addrs {
		pk, err := sol.PublicKeyFromBase58(a)
		if err != nil {
			t.Fatal(err)
		}
		w[string(pk[:])] = struct{}{}
	}
	return w
}

func watchKeys(keys ...[32]byte) keySet {
	w := keySet{}
	for _, k := range keys {
		w[string(k[:])] = struct{}{}
	}
	return w
}
