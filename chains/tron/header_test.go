package tron_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
)

// TestHeaderIsOneCall: a walk-back step (Header) is one getblockbynum, with
// no transaction infos, and agrees with Block on the block's identity.
func TestHeaderIsOneCall(t *testing.T) {
	node := tronfake.New()
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		node.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := tron.New(tron.Config{URL: srv.URL, USDTContract: mainnetUSDT})
	if err != nil {
		t.Fatal(err)
	}
	node.Mine(3)
	ctx := context.Background()
	ref, err := c.Header(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := map[string]int{}
	for k, v := range calls {
		got[k] = v
	}
	mu.Unlock()
	if len(got) != 1 || got["/wallet/getblockbynum"] != 1 {
		t.Fatalf("calls per walk-back step: %v, want one /wallet/getblockbynum", got)
	}
	b, err := c.Block(ctx, 2, chains.NewWatchSet(1))
	if err != nil || b.BlockRef != ref {
		t.Fatalf("Block = %+v, %v; Header said %+v", b.BlockRef, err, ref)
	}
	if _, err := c.Header(ctx, 1000); !errors.Is(err, chains.ErrBlockNotFound) {
		t.Fatalf("Header above the head = %v, want ErrBlockNotFound", err)
	}
}
