package chains_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/ingest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// verifiedFake is a scripted chain whose node answers VerifyChain with err.
type verifiedFake struct {
	*chainstest.Fake
	err   error
	asked int
}

func (f *verifiedFake) VerifyChain(_ context.Context, chain string) error {
	f.asked++
	return f.err
}

// A fresh scanner asks the node's chain before anything else: on another
// chain it places no cursor (nothing of that chain is ever recorded); a
// failure to ask is an ordinary failed step, not a critical one; once the
// node is right the scanner starts, and asks again only after a poll
// interval.
func TestChainIsVerifiedBeforeTheFirstCursor(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := &verifiedFake{Fake: chainstest.NewFake(e.Clock.Now)}
	f.Mine(3)
	wrong := fmt.Errorf("litecoin: %w: the node reports chain \"main\", and networks.litecoin.chain is regtest", chains.ErrWrongChain)
	f.err = wrong
	clk := clock.NewFake(time.Unix(0, 0))
	sc := chains.NewScanner(chains.ScannerConfig{Network: payment.Litecoin, Chain: "regtest", PollInterval: time.Minute, Clock: clk},
		f, e.Sink.ScannerSinks(), &ingest.Keys{Store: e.Store}, chains.NewWatchSet(8), nil)
	ctx := context.Background()
	if _, err := sc.Step(ctx); !errors.Is(err, chains.ErrWrongChain) || !errors.Is(err, wrong) {
		t.Fatalf("step on another chain: %v", err)
	}
	if n := count(t, e, "SELECT count(*) FROM cursors WHERE network = 'litecoin'"); n != 0 {
		t.Fatalf("a cursor was placed on another chain")
	}
	f.err = errors.New("connection refused")
	if _, err := sc.Step(ctx); err == nil || errors.Is(err, chains.ErrWrongChain) || errors.Is(err, chains.ErrDeepReorg) {
		t.Fatalf("step when the node cannot say its chain: %v, want an ordinary failure", err)
	}
	if n := count(t, e, "SELECT count(*) FROM cursors WHERE network = 'litecoin'"); n != 0 {
		t.Fatalf("a cursor was placed before the chain was known")
	}
	f.err = nil
	if _, err := sc.Step(ctx); err != nil {
		t.Fatalf("step on the right chain: %v", err)
	}
	if n := count(t, e, "SELECT count(*) FROM cursors WHERE network = 'litecoin'"); n != 1 {
		t.Fatalf("no cursor once the chain is right")
	}
	asked := f.asked
	f.Mine(2)
	for range 3 {
		if _, err := sc.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if f.asked != asked {
		t.Fatalf("asked the chain %d times within a poll interval", f.asked-asked)
	}
	clk.Advance(time.Minute)
	f.err = wrong
	if _, err := sc.Step(ctx); !errors.Is(err, chains.ErrWrongChain) {
		t.Fatalf("step a poll interval after the node changed chain: %v", err)
	}
}
