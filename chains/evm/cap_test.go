package evm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
)

// An answer above the response cap (64 MiB by default, as the Bitcoin
// client) is a clear size error, not a read of whatever the node sends.
func TestOversizedAnswerIsASizeError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x10","padding":"`)
		chunk := strings.Repeat("x", 1<<20)
		for i := 0; i < 65; i++ {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, `"}`)
	}))
	defer srv.Close()
	_, err := evm.New(context.Background(), evm.Config{URL: srv.URL, Trace: evm.TraceOff})
	if err == nil || !errors.Is(err, chains.ErrInvalidResponse) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a 65 MiB answer: %v, want a size error", err)
	}
	// Under a smaller configured cap, a small answer still passes and a
	// larger one fails.
	small := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x10","padding":"`+strings.Repeat("y", 2000)+`"}`)
	}))
	defer small.Close()
	if _, err := evm.New(context.Background(), evm.Config{URL: small.URL, Trace: evm.TraceOff, MaxResponseBytes: 4096}); err != nil {
		t.Fatalf("a 2 KB answer under a 4 KB cap: %v", err)
	}
	_, err = evm.New(context.Background(), evm.Config{URL: small.URL, Trace: evm.TraceOff, MaxResponseBytes: 1024})
	if !errors.Is(err, evm.ErrResponseTooLarge) || !strings.Contains(err.Error(), "1024 bytes") {
		t.Fatalf("a 2 KB answer under a 1 KB cap: %v", err)
	}
}
