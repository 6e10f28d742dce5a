package intents_test

import (
	"fmt"
	"testing"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// indexOf returns the derivation index of a handed-out address.
func indexOf(t *testing.T, e *paywatchtest.Env, address string) int64 {
	t.Helper()
	var idx int64
	if err := e.Store.Pool().QueryRow(t.Context(), `SELECT a.derivation_index FROM addresses a JOIN intents i ON i.network = a.network AND i.address_key = a.key
		WHERE a.address = $1 AND NOT EXISTS (SELECT 1 FROM free_addresses f WHERE f.network = a.network AND f.key = a.key)`,
		address).Scan(&idx); err != nil {
		t.Fatalf("address %s: %v", address, err)
	}
	return idx
}

func count(t *testing.T, e *paywatchtest.Env, query string) int {
	t.Helper()
	var n int
	if err := e.Store.Pool().QueryRow(t.Context(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A creation refused after its address was taken (the payable check runs in
// the same round trip as the take) leaves the address free for the next one.
func TestRefusedCreationFreesItsAddress(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron))
	first := e.CreateIntent("order", "ORD-R1", "", "10.00", "TRX")
	status, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": "ORD-R1", "amount_usd": "11.00", "method": "TRX"})
	if status != 409 {
		t.Fatalf("other amount for a payable: %d %s, want 409", status, body)
	}
	second := e.CreateIntent("order", "ORD-R2", "", "10.00", "TRX")
	if a, b := indexOf(t, e, first.Address), indexOf(t, e, second.Address); b != a+1 {
		t.Fatalf("indexes %d then %d: the refused creation kept an address", a, b)
	}
	if n := count(t, e, `SELECT count(*) FROM intents`); n != 2 {
		t.Fatalf("%d intents, want 2", n)
	}
	if n := count(t, e, `SELECT count(*) FROM events WHERE type = 'intent.created'`); n != 2 {
		t.Fatalf("%d intent.created events, want 2", n)
	}
}

// With nothing pre-derived (gap 0), each creation derives its address.
func TestCreationDerivesWhenNoneIsFree(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["tron"].Gap = 0
	}))
	seen := map[string]bool{}
	for i := range 3 {
		v := e.CreateIntent("order", fmt.Sprintf("ORD-D%d", i), "", "10.00", "TRX")
		if seen[v.Address] {
			t.Fatalf("address %s handed out twice", v.Address)
		}
		seen[v.Address] = true
		if idx := indexOf(t, e, v.Address); idx != int64(i) {
			t.Fatalf("creation %d got index %d", i, idx)
		}
	}
	if n := count(t, e, `SELECT count(*) FROM free_addresses WHERE network = 'tron'`); n != 0 {
		t.Fatalf("%d free tron addresses with gap 0", n)
	}
}
