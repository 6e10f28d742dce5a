package intents_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// createAs posts a creation and returns its status and intent (zero when
// not 200 or 201) and body.
func createAs(t *testing.T, e *paywatchtest.Env, ref, usd, method string) (int, views.Intent, []byte) {
	t.Helper()
	status, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": ref, "amount_usd": usd, "method": method})
	var v views.Intent
	if status == 200 || status == 201 {
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s %s: %d %s", ref, method, status, body)
		}
	}
	return status, v, body
}

// A reloading or scripted checkout cannot drain the addresses (issue 22,
// item 5): creating again for a payable that has an open intent of the
// method answers that intent (200, no new address), and a payable with
// limits.open_intents_per_payable open intents is refused (409
// too_many_open_intents), changing nothing. Once an intent's deadline
// passed it is no longer open. Derived addresses (Bitcoin, batched
// creations), a pool (Solana) and a detected payment are covered.
func TestCreationReturnsTheOpenIntent(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin, payment.Ethereum, payment.Solana),
		paywatchtest.WithConfig(func(c *config.Config) { c.Limits.OpenIntentsPerPayable = 3 }))

	first := e.CreateIntent("order", "ORD-OPEN", "", "10.00", "BTC")
	before := e.Counts()
	for range 3 { // a reloading checkout
		status, again, body := createAs(t, e, "ORD-OPEN", "10.00", "BTC")
		if status != 200 || again.ID != first.ID || again.Address != first.Address || again.AmountBaseUnits != first.AmountBaseUnits {
			t.Fatalf("creating BTC again for ORD-OPEN: %d %s, want 200 with %s", status, body, first.ID)
		}
	}
	if after := e.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("answering the open intent wrote something: %v, then %v", before, after)
	}

	// Other methods get their own intents, up to the cap.
	sol := e.CreateIntent("order", "ORD-OPEN", "", "10.00", "SOL")
	eth := e.CreateIntent("order", "ORD-OPEN", "", "10.00", "ETH")
	if sol.ID == first.ID || eth.ID == first.ID || sol.ID == eth.ID {
		t.Fatalf("intents %s %s %s: each method needs its own", first.ID, sol.ID, eth.ID)
	}
	if status, again, body := createAs(t, e, "ORD-OPEN", "10.00", "SOL"); status != 200 || again.ID != sol.ID {
		t.Fatalf("creating SOL again: %d %s, want 200 with %s", status, body, sol.ID)
	}
	before = e.Counts()
	status, _, body := createAs(t, e, "ORD-OPEN", "10.00", "LTC")
	if status != 409 || !strings.Contains(string(body), `"too_many_open_intents"`) || !strings.Contains(string(body), "3 open intents") {
		t.Fatalf("a fourth method over a cap of 3: %d %s, want 409 too_many_open_intents", status, body)
	}
	if after := e.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused creation wrote something: %v, then %v", before, after)
	}
	// Another payable is not concerned.
	e.CreateIntent("order", "ORD-OTHER", "", "10.00", "LTC")

	// A detected intent stays open past its deadline: paying it is in
	// progress, so a reload answers it.
	e.Pay(first, payment.Native, paywatchtest.Units(first.AmountBaseUnits), "pay-open")
	e.Sync(payment.Bitcoin)
	if got := e.Intent(first.ID); got.Status != payment.IntentDetected {
		t.Fatalf("paid intent is %s, want detected", got.Status)
	}
	e.Clock.Advance(e.Config.Deadline.Duration + time.Minute)
	for _, n := range []payment.Network{payment.Bitcoin, payment.Litecoin, payment.Ethereum, payment.Solana} {
		e.Sync(n) // the scanners report at the new time
	}
	if status, again, body := createAs(t, e, "ORD-OPEN", "10.00", "BTC"); status != 200 || again.ID != first.ID {
		t.Fatalf("creating BTC again while its payment is detected: %d %s, want 200 with %s", status, body, first.ID)
	}
	// SOL and ETH passed their deadline: no longer open, so new intents
	// (the cap counts the detected BTC one and the new ones).
	sol2 := e.CreateIntent("order", "ORD-OPEN", "", "10.00", "SOL")
	if sol2.ID == sol.ID || sol2.Address == sol.Address {
		t.Fatalf("SOL after its intent's deadline: %s at %s, want a new intent and address", sol2.ID, sol2.Address)
	}
	e.CreateIntent("order", "ORD-OPEN", "", "10.00", "LTC")
	if status, _, body := createAs(t, e, "ORD-OPEN", "10.00", "ETH"); status != 409 || !strings.Contains(string(body), "too_many_open_intents") {
		t.Fatalf("ETH with BTC, SOL and LTC open under a cap of 3: %d %s, want 409", status, body)
	}
}

// Concurrent first creations of one payable and method (a double-clicked
// pay button, a checkout reloaded in several tabs) answer one intent: one
// 201, the others 200 with it, one address taken. The payable's row lock
// orders them; batched (Bitcoin) and pool (Solana) creations alike.
func TestConcurrentCreationsOfOnePayableAnswerOneIntent(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Solana))
	for _, method := range []string{"BTC", "SOL"} {
		ref := "ORD-TABS-" + method
		const n = 16
		type answer struct {
			status int
			id     string
			body   []byte
		}
		answers := make([]answer, n)
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				status, v, body := createAs(t, e, ref, "20.00", method)
				answers[i] = answer{status, v.ID, body}
			}()
		}
		start.Done()
		wg.Wait()
		created, reused := "", 0
		for _, a := range answers {
			switch a.status {
			case 201:
				if created != "" {
					t.Fatalf("%s: two 201s (%s, %s)", method, created, a.id)
				}
				created = a.id
			case 200:
				reused++
			default:
				t.Fatalf("%s: %d %s", method, a.status, a.body)
			}
		}
		for _, a := range answers {
			if a.id != created {
				t.Fatalf("%s: answered %s and %s", method, created, a.id)
			}
		}
		if created == "" || reused != n-1 {
			t.Fatalf("%s: %q created, %d reused, want one 201 and %d 200s", method, created, reused, n-1)
		}
		var intents, taken int
		err := e.Store.Pool().QueryRow(t.Context(), `SELECT count(*), count(DISTINCT address) FROM intents i JOIN payables p ON p.id = i.payable_id
			WHERE p.reference = $1`, ref).Scan(&intents, &taken)
		if err != nil || intents != 1 || taken != 1 {
			t.Fatalf("%s: %d intents, %d addresses stored, %v; want 1", method, intents, taken, err)
		}
	}
}

// A renewal takes an address as a creation does, so it answers the same
// way: the payable's open intent of the method comes back (200, the old
// intent left as it is), and past the cap it is refused, changing nothing.
func TestRenewalAnswersTheOpenIntentAndKeepsTheCap(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Litecoin, payment.Ethereum),
		paywatchtest.WithConfig(func(c *config.Config) { c.Limits.OpenIntentsPerPayable = 2 }))
	a := e.CreateIntent("order", "ORD-RENEW", "", "10.00", "BTC")
	d := e.CreateIntent("order", "ORD-RENEW", "", "10.00", "ETH")
	e.Clock.Advance(e.Config.Deadline.Duration + time.Minute)
	for _, n := range []payment.Network{payment.Bitcoin, payment.Litecoin, payment.Ethereum} {
		e.Sync(n)
	}
	b := e.CreateIntent("order", "ORD-RENEW", "", "10.00", "BTC") // a is no longer open
	if b.ID == a.ID {
		t.Fatalf("BTC after its intent's deadline answered the old intent %s", a.ID)
	}
	renew := func(id string) (int, views.Intent, []byte) {
		status, body := e.Do("POST", "/v1/intents/"+id+"/renew", "storefront", nil)
		var v views.Intent
		if status == 200 || status == 201 {
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
		}
		return status, v, body
	}
	if _, err := e.Service.Sweep(t.Context()); err != nil { // a and d expire
		t.Fatal(err)
	}
	before := e.Counts()
	if status, v, body := renew(a.ID); status != 200 || v.ID != b.ID {
		t.Fatalf("renewing %s while %s of its method is open: %d %s, want 200 with %s", a.ID, b.ID, status, body, b.ID)
	}
	if after := e.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("answering the open intent wrote something: %v, then %v", before, after)
	}
	if got := e.Intent(a.ID); got.Status != payment.IntentExpired || got.SupersededBy != nil {
		t.Fatalf("the old intent after the renewal answered the open one: %s superseded by %v", got.Status, got.SupersededBy)
	}
	e.CreateIntent("order", "ORD-RENEW", "", "10.00", "LTC") // two open: the cap
	before = e.Counts()
	if status, _, body := renew(d.ID); status != 409 || !strings.Contains(string(body), "too_many_open_intents") {
		t.Fatalf("renewing ETH with BTC and LTC open under a cap of 2: %d %s, want 409 too_many_open_intents", status, body)
	}
	if after := e.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused renewal wrote something: %v, then %v", before, after)
	}
}
