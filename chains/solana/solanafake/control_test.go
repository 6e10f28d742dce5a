package solanafake

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mr-tron/base58"
)

// The control handler pays over HTTP; the payment lands in the next slot,
// is visible through getBalance and getTransaction, and an overdraft or a
// bad key is refused without queuing anything.
func TestControlPayAndMine(t *testing.T) {
	n := New()
	rpc := httptest.NewServer(n)
	defer rpc.Close()
	ctl := httptest.NewServer(n.ControlHandler())
	defer ctl.Close()

	from := sha256.Sum256([]byte("control payer"))
	to := sha256.Sum256([]byte("control payee"))
	body := fmt.Sprintf(`{"from":%q,"to":%q,"lamports":"2500000"}`, base58.Encode(from[:]), base58.Encode(to[:]))
	status, out := post(t, ctl.URL+"/pay/sol", "application/json", body)
	if status != 200 {
		t.Fatalf("pay: %d %s", status, out)
	}
	var paid struct{ Signature string }
	if err := json.Unmarshal(out, &paid); err != nil || paid.Signature == "" {
		t.Fatalf("pay answer %s: %v", out, err)
	}
	if got := n.Balance(to); got != 0 {
		t.Fatalf("balance before the slot: %d", got)
	}
	if status, out := post(t, ctl.URL+"/mine", "application/json", `{"slots":1}`); status != 200 {
		t.Fatalf("mine: %d %s", status, out)
	}
	if got := n.Balance(to); got != 2_500_000 {
		t.Fatalf("balance after the slot: %d, want 2500000", got)
	}
	a := call(t, rpc.URL, "getTransaction", paid.Signature, map[string]any{"maxSupportedTransactionVersion": 0})
	if a.Error != nil || string(a.Result) == "null" {
		t.Fatalf("getTransaction: %+v %s", a.Error, a.Result)
	}

	tip := n.Tip()
	for _, bad := range []string{
		fmt.Sprintf(`{"from":%q,"to":%q,"lamports":"%d"}`, base58.Encode(from[:]), base58.Encode(to[:]), uint64(startBalance)), // overdraft
		fmt.Sprintf(`{"from":"nope","to":%q,"lamports":"1"}`, base58.Encode(to[:])),
		fmt.Sprintf(`{"from":%q,"to":%q,"lamports":"0"}`, base58.Encode(from[:]), base58.Encode(to[:])),
		`{"slots":1,"extra":true}`,
	} {
		if status, out := post(t, ctl.URL+"/pay/sol", "application/json", bad); status != 400 {
			t.Errorf("%s: %d %s, want 400", bad, status, out)
		}
	}
	n.Mine(1)
	if got := n.Balance(to); got != 2_500_000 {
		t.Fatalf("a refused payment moved money: balance %d", got)
	}
	if n.Tip() != tip+1 {
		t.Fatalf("tip %d, want %d", n.Tip(), tip+1)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Produce(ctx, 5*time.Millisecond) }()
	// A wait for the condition, bounded generously, not by the machine's speed.
	wait, stop := context.WithTimeout(ctx, 5*time.Minute)
	defer stop()
	for n.Tip() < tip+4 {
		select {
		case <-wait.Done():
			t.Fatalf("Produce made no slots: tip %d", n.Tip())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Produce returned %v", err)
	}
}

// The same payments on two fresh nodes get the same signatures (the fake is
// deterministic) unless one node is reseeded.
func TestReseed(t *testing.T) {
	from := sha256.Sum256([]byte("reseed payer"))
	to := sha256.Sum256([]byte("reseed payee"))
	pay := func(n *Node) string {
		n.Mine(2)
		return n.PaySOL(from, to, 1000, false, false)
	}
	a, b, c := New(), New(), New()
	c.Reseed(1 << 40)
	sa, sb, sc := pay(a), pay(b), pay(c)
	if sa != sb {
		t.Fatalf("fresh nodes disagree: %s vs %s", sa, sb)
	}
	if sc == sa {
		t.Fatalf("a reseeded node repeated signature %s", sa)
	}
}
