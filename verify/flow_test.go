package verify_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/verify"
)

// verifiers stands for a pool with one endpoint of role verify (the
// scripted chains have no transport to pin: what answers is the Source
// the verifier is given).
type verifiers struct{}

func (verifiers) Verifiers(string) []string      { return []string{"checker"} }
func (verifiers) CountVerification(string, bool) {}

// Issue 33 item 5 through the payment core (scanner, sink, matcher,
// store): a large intent whose payment the scanner confirmed stays
// detected until the second source verifies it, and is paid then; a small
// one is paid on the scan alone. A reorg that mines the payment again in
// another block reverts the paid intent, and it is paid again only once
// the payment in the new block is verified. A verifier on another chain
// (a lying provider) holds it, counted once however often it is checked.
func TestALargeIntentIsPaidOnlyOnceASecondSourceAgrees(t *testing.T) {
	btc := payment.Bitcoin
	e := paywatchtest.New(t, paywatchtest.Only(btc), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks[btc].LargeAmountUSD = "1000.00"
	}))
	ctx := context.Background()
	pool := verifiers{}
	honest := verify.New(e.Store, e.Service, verify.Config{Networks: map[payment.Network]verify.Network{btc: {Source: e.Chains[btc], Pool: pool, MinCents: 100000}}})
	status := func(id string) string { return string(e.Intent(id).Status) }

	small := e.CreateIntent("order", "ORD-SMALL", "", "10.00", "BTC")
	large := e.CreateIntent("order", "ORD-LARGE", "", "2000.00", "BTC")
	e.Pay(small, payment.Native, paywatchtest.Units(small.AmountBaseUnits), "small")
	tr := e.Pay(large, payment.Native, paywatchtest.Units(large.AmountBaseUnits), "large")
	e.Chains[btc].Mine(6)
	e.Sync(btc)
	if st := status(small.ID); st != "paid" {
		t.Fatalf("small intent: %s, want paid", st)
	}
	if st := status(large.ID); st != "detected" {
		t.Fatalf("large intent before verification: %s, want detected", st)
	}
	held, err := e.Store.HeldByVerification(ctx, string(btc), 100000, 10)
	if err != nil || len(held) != 1 || held[0].IntentID != large.ID || held[0].State != "" {
		t.Fatalf("held: %+v %v", held, err)
	}

	// A verifier on another chain: unseen, held, counted once.
	other := chainstest.NewFake(e.Clock.Now)
	other.Send(tr.TxID, tr.Index, tr.Asset, tr.Key, tr.Address, new(big.Int).Sub(tr.Amount, big.NewInt(1)))
	other.Mine(12)
	liar := verify.New(e.Store, e.Service, verify.Config{Networks: map[payment.Network]verify.Network{btc: {Source: other, Pool: pool, MinCents: 100000}}})
	for i := 0; i < 2; i++ {
		if n, err := liar.Once(ctx, btc); err != nil || n != 0 {
			t.Fatalf("lying verifier: %d verified, %v", n, err)
		}
	}
	if st := status(large.ID); st != "detected" {
		t.Fatalf("large intent a verifier disputes: %s, want detected", st)
	}
	if got := liar.Disagreements(btc); got != 1 {
		t.Fatalf("disagreements counted %d, want 1", got)
	}
	if held, _ := e.Store.HeldByVerification(ctx, string(btc), 100000, 10); len(held) != 1 || held[0].State != store.VerifyUnseen {
		t.Fatalf("held after the lie: %+v", held)
	}

	// The honest verifier: paid.
	if n, err := honest.Once(ctx, btc); err != nil || n != 1 {
		t.Fatalf("honest verifier: %d verified, %v", n, err)
	}
	if st := status(large.ID); st != "paid" {
		t.Fatalf("large intent once verified: %s, want paid", st)
	}

	// A reorg mines the payment again in another block: reverted, and
	// paid again only once verified there.
	var blocks [][]chains.Transfer
	for i := 0; i < 8; i++ {
		blocks = append(blocks, nil)
	}
	blocks[2] = []chains.Transfer{tr}
	e.Chains[btc].ReorgTo(7, blocks)
	e.Sync(btc)
	if st := status(large.ID); st != "reverted" {
		t.Fatalf("large intent after its payment moved to another block: %s, want reverted", st)
	}
	if n, err := honest.Once(ctx, btc); err != nil || n != 1 {
		t.Fatalf("verifying the payment in its new block: %d verified, %v", n, err)
	}
	if st := status(large.ID); st != "paid" {
		t.Fatalf("large intent verified in its new block: %s, want paid", st)
	}
	if st := status(small.ID); st != "paid" {
		t.Fatalf("small intent: %s", st)
	}
}
