package intents_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// nodeDown marks network n's scanner as failing, as Scanner.Run does when
// its node stops answering: new intents on n are then refused.
func nodeDown(t *testing.T, e *paywatchtest.Env, n payment.Network) {
	t.Helper()
	if err := e.Sink.SetHealth(t.Context(), n, chains.Health{Healthy: false, LastError: "connection refused"}); err != nil {
		t.Fatal(err)
	}
}

// A create whose response was lost is replayed from its Idempotency-Key
// while the chain is down and the rate gone stale: the storefront gets the
// stored 201, byte for byte, never a 503 that makes it create a second
// intent.
func TestIdempotentCreateReplaysDuringOutage(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	req := map[string]string{"kind": "order", "reference": "ORD-REPLAY", "amount_usd": "249.00", "method": "BTC"}
	st, first := e.Do("POST", "/v1/intents", "storefront", req, "Idempotency-Key", "k-create")
	if st != 201 {
		t.Fatalf("create: %d %s", st, first)
	}

	nodeDown(t, e, payment.Bitcoin)
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
		"kind": "order", "reference": "ORD-NEW", "amount_usd": "249.00", "method": "BTC"})
	if c, _ := code(t, body); st != 503 || c != "chain_unavailable" {
		t.Fatalf("new create while the node is down: %d %s, want 503 chain_unavailable", st, body)
	}
	before := e.Counts()
	st, body = e.Do("POST", "/v1/intents", "storefront", req, "Idempotency-Key", "k-create")
	if st != 201 || !bytes.Equal(body, first) {
		t.Fatalf("replay while the node is down: %d %s\nwant the stored 201 %s", st, body, first)
	}
	// The rate goes stale too (the Env's rates are valid for a year).
	e.Clock.Advance(2 * 365 * 24 * time.Hour)
	st, body = e.Do("POST", "/v1/intents", "storefront", req, "Idempotency-Key", "k-create")
	if st != 201 || !bytes.Equal(body, first) {
		t.Fatalf("replay without chain and rate: %d %s", st, body)
	}
	// Another body under the same key is still a mismatch, even one the
	// service would refuse (LTC is disabled in this Env; 0.01 USD is below
	// the BTC dust minimum).
	other, disabled, tiny := maps.Clone(req), maps.Clone(req), maps.Clone(req)
	other["amount_usd"], disabled["method"], tiny["amount_usd"] = "250.00", "LTC", "0.01"
	for _, b := range []any{other, disabled, tiny} {
		st, body = e.Do("POST", "/v1/intents", "storefront", b, "Idempotency-Key", "k-create")
		if c, _ := code(t, body); st != 409 || c != "idempotency_mismatch" {
			t.Fatalf("same key, other body: %d %s, want 409 idempotency_mismatch", st, body)
		}
	}
	if after := e.Counts(); !maps.Equal(before, after) {
		t.Fatalf("replays changed the database: %v → %v", before, after)
	}
}

// A renew whose response was lost is replayed the same way.
func TestIdempotentRenewReplaysDuringOutage(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	v := e.CreateIntent("order", "ORD-RENEW-REPLAY", "", "249.00", "BTC")
	w := e.CreateIntent("order", "ORD-RENEW-OTHER", "", "249.00", "BTC")
	e.Clock.Advance(31 * time.Minute)
	e.Sync(payment.Bitcoin) // the scanner keeps reporting while the deadline passes
	st, first := e.Do("POST", "/v1/intents/"+v.ID+"/renew", "storefront", nil, "Idempotency-Key", "k-renew")
	if st != 201 {
		t.Fatalf("renew: %d %s", st, first)
	}
	var renewed views.Intent
	if err := json.Unmarshal(first, &renewed); err != nil || renewed.ID == v.ID {
		t.Fatalf("renewed intent %s: %v", first, err)
	}

	nodeDown(t, e, payment.Bitcoin)
	st, body := e.Do("POST", "/v1/intents/"+w.ID+"/renew", "storefront", nil)
	if c, _ := code(t, body); st != 503 || c != "chain_unavailable" {
		t.Fatalf("new renew while the node is down: %d %s, want 503 chain_unavailable", st, body)
	}
	before := e.Counts()
	st, body = e.Do("POST", "/v1/intents/"+v.ID+"/renew", "storefront", nil, "Idempotency-Key", "k-renew")
	if st != 201 || !bytes.Equal(body, first) {
		t.Fatalf("renew replay while the node is down: %d %s\nwant the stored 201 %s", st, body, first)
	}
	st, body = e.Do("POST", "/v1/intents/"+w.ID+"/renew", "storefront", nil, "Idempotency-Key", "k-renew")
	if c, _ := code(t, body); st != 409 || c != "idempotency_mismatch" {
		t.Fatalf("same key, other intent: %d %s, want 409 idempotency_mismatch", st, body)
	}
	if after := e.Counts(); !maps.Equal(before, after) {
		t.Fatalf("replays changed the database: %v → %v", before, after)
	}
}
