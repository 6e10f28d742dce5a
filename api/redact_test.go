package api_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// lockedBuffer is a log sink shared by goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var nodeSecrets = []string{"KEY123", "QK1", "alice", "s3cret", "/v3/", "api-key"}

func leaked(s string) string {
	for _, secret := range nodeSecrets {
		if strings.Contains(s, secret) {
			return secret
		}
	}
	return ""
}

// A failing node's error names the node by its host: no credential, path
// key or query string reaches /v1/status, /v1/methods, a 503 message or a
// log line.
func TestNodeURLNeverReachesAnswersOrLogs(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Ethereum))
	f := e.Chains[payment.Ethereum]
	f.FailTip(&url.Error{Op: "Post", URL: "http://alice:s3cret@127.0.0.1:8545/v3/KEY123?api-key=QK1",
		Err: errors.New("dial tcp 127.0.0.1:8545: connect: connection refused")})
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc := e.Config.Networks["ethereum"]
	steps := 0
	stop := func(error) { // after the first step's health is recorded
		if steps++; steps == 2 {
			cancel()
		}
	}
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Ethereum, PollInterval: time.Millisecond,
		Parallel: nc.Parallel, SafetyDepth: nc.SafetyDepth, Observe: stop},
		f, e.Sink.ScannerSinks(), &ingest.Keys{Store: e.Store}, e.Watch[payment.Ethereum], log)
	if err := sc.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "127.0.0.1:8545") {
		t.Fatalf("the log does not name the node's host: %s", logs.String())
	}
	if s := leaked(logs.String()); s != "" {
		t.Fatalf("log holds %q: %s", s, logs.String())
	}
	st, body := e.Do("GET", "/v1/status", "operator", nil)
	if st != 200 || !strings.Contains(string(body), "node 127.0.0.1:8545") {
		t.Fatalf("status: %d %s, want the node's host in last_error", st, body)
	}
	if s := leaked(string(body)); s != "" {
		t.Fatalf("/v1/status holds %q: %s", s, body)
	}
	_, body = e.Do("GET", "/v1/methods", "storefront", nil)
	if s := leaked(string(body)); s != "" || !strings.Contains(string(body), "127.0.0.1:8545") {
		t.Fatalf("/v1/methods holds %q: %s", s, body)
	}
	st, body = e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-URL", "amount_usd": "5.00", "method": "ETH"})
	if st != 503 || !strings.Contains(string(body), "chain_unavailable") {
		t.Fatalf("intent on a failing node: %d %s", st, body)
	}
	if s := leaked(string(body)); s != "" {
		t.Fatalf("503 message holds %q: %s", s, body)
	}

	// The Ethereum client that cannot reach its node says so by host.
	logs = lockedBuffer{}
	_, err := evm.New(context.Background(), evm.Config{URL: "http://alice:s3cret@127.0.0.1:1/v3/KEY123?api-key=QK1", Log: log})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("evm.New against a closed port: %v", err)
	}
	if s := leaked(err.Error() + logs.String()); s != "" {
		t.Fatalf("evm.New error or log holds %q: %v %s", s, err, logs.String())
	}
}
