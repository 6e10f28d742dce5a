package chains_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A node that cannot say its chain fails the step with an error that names
// the check and the network once each (issue 36 item 8: it read "chain
// identity: bitcoin: chain identity: getblockchaininfo: …").
func TestChainIdentityFailureSaysItOnce(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "node is down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	src, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: "http://u:p@" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Bitcoin, Chain: "regtest", PollInterval: time.Minute, Clock: clock.NewFake(time.Unix(0, 0))},
		src, e.Sink.ScannerSinks(), &ingest.Keys{Store: e.Store}, chains.NewWatchSet(8), nil)
	_, err = sc.Step(context.Background())
	if err == nil {
		t.Fatal("a step against a node that is down succeeded")
	}
	msg := err.Error()
	for _, part := range []string{"chain identity", "bitcoin", "getblockchaininfo"} {
		if n := strings.Count(msg, part); n != 1 {
			t.Errorf("%q appears %d times in %q, want once", part, n, msg)
		}
	}
}
