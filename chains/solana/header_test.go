package solana

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
)

// TestHeaderIsOneCallWithoutTransactions: a walk-back step (Header) is one
// getBlock with transactionDetails "none" and agrees with Block on the
// block's identity.
func TestHeaderIsOneCallWithoutTransactions(t *testing.T) {
	node := solanafake.New()
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		call := req.Method
		if req.Method == "getBlock" && len(req.Params) == 2 {
			var cfg struct {
				TransactionDetails string `json:"transactionDetails"`
			}
			_ = json.Unmarshal(req.Params[1], &cfg)
			call += "/" + cfg.TransactionDetails
		}
		mu.Lock()
		calls = append(calls, call)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		node.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	node.Mine(3)
	ctx := context.Background()
	b, err := c.Block(ctx, 2, chains.NewWatchSet(1))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	calls = nil
	mu.Unlock()
	ref, err := c.Header(ctx, 2)
	if err != nil || ref != b.BlockRef {
		t.Fatalf("Header = %+v, %v; Block says %+v", ref, err, b.BlockRef)
	}
	mu.Lock()
	got := calls
	mu.Unlock()
	if len(got) != 1 || got[0] != "getBlock/none" {
		t.Fatalf("calls per walk-back step: %v, want one getBlock without transactions", got)
	}
	if _, err := c.Header(ctx, 10_000); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Header above the finalized tip = %v, want ErrBlockNotFound", err)
	}
}
