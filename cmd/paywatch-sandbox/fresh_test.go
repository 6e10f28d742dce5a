package main

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
)

// A fresh sandbox tells the truth (issue 36 items 2 and 5): its inbox is
// empty once every scanner has caught up (no watched address is a funded
// dev account that the token mint pays); the simulated Tron and Solana
// nodes stamp blocks with the time of day, so their lag is seconds, not
// years; and a USDT-TRC20 payment sent after its intent's deadline comes out
// late.
func TestSandboxFreshStartTellsTheTruth(t *testing.T) {
	needSandboxPeers(t)
	checkAPIAnswers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dev := startDevWith(t, ctx, devOptions{Dir: sandboxDir(t), Listen: fmt.Sprintf("127.0.0.1:%d", port), Deadline: time.Minute})
	env := dev.env

	var usdt struct {
		intentState
		ExpiresAt time.Time `json:"expires_at"`
	}
	body := map[string]string{"kind": "order", "reference": fmt.Sprintf("LATE-%d", time.Now().UnixNano()), "amount_usd": "5.00", "method": string(payment.USDTTRC20)}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodPost, "/v1/intents", body, &usdt); err != nil {
		t.Fatal(err)
	}

	// Every scanner catches up with its node; the inbox is still empty.
	type netStatus struct {
		Network       string     `json:"network"`
		NodeHeight    int64      `json:"node_height"`
		ScannedHeight int64      `json:"scanned_height"`
		LagSeconds    int64      `json:"lag_seconds"`
		LastBlockAt   *time.Time `json:"last_block_at"`
	}
	var st struct {
		Networks []netStatus `json:"networks"`
	}
	for caught := false; !caught; {
		if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/status", nil, &st); err != nil {
			t.Fatal(err)
		}
		caught = len(st.Networks) == len(payment.Networks)
		for _, n := range st.Networks {
			caught = caught && n.NodeHeight > 0 && n.ScannedHeight >= n.NodeHeight
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the scanners did not catch up: %+v", st.Networks)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var inbox struct {
		Transfers []map[string]any `json:"transfers"`
	}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/transfers?status=all", nil, &inbox); err != nil {
		t.Fatal(err)
	}
	if len(inbox.Transfers) != 0 {
		t.Errorf("a fresh sandbox's inbox holds %d transfers: %v", len(inbox.Transfers), inbox.Transfers)
	}
	// The simulated chains' newest blocks are of today.
	for _, n := range st.Networks {
		if n.Network != string(payment.Tron) && n.Network != string(payment.Solana) {
			continue
		}
		if n.LastBlockAt == nil || time.Since(*n.LastBlockAt).Abs() > 5*time.Minute || n.LagSeconds > 300 {
			t.Errorf("%s: last block at %v, lag %d s; want the time of day", n.Network, n.LastBlockAt, n.LagSeconds)
		}
	}

	// Past the deadline (a wait for the clock, not for the machine's
	// speed), the USDT-TRC20 payment is late.
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(time.Until(usdt.ExpiresAt) + time.Second):
	}
	units, _ := new(big.Int).SetString(usdt.AmountBaseUnits, 10)
	txid, err := payTron(ctx, env, payment.MustMethod(payment.USDTTRC20), usdt.Address, units)
	if err != nil {
		t.Fatal(err)
	}
	for {
		got, err := getIntent(ctx, env, usdt.ID)
		if err == nil && len(got.Transfers) == 1 && got.Transfers[0].TxID == txid {
			if got.Transfers[0].Classification != "late" || got.Status == "paid" {
				t.Fatalf("a payment after the deadline: intent %s, transfer %+v; want late", got.Status, got.Transfers[0])
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the late payment %s was not seen: %+v (%v)", txid, got, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
