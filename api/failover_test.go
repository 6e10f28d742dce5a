package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/paywatchtest"
)

// While the database is away (a primary that vanished without closing its
// sockets, before a standby is promoted), requests get 503
// database_unavailable with Retry-After, never a 500 and never a success
// that was not committed; the same request under the same Idempotency-Key
// succeeds once the database answers, and is applied once.
func TestRequestsDuringAFailoverGet503WithRetryAfter(t *testing.T) {
	var p *devnet.Proxy
	var direct string
	e := paywatchtest.New(t, paywatchtest.BehindProxy(&p, &direct))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Store.Run(ctx)
	order := map[string]string{"kind": "order", "reference": "ORD-FAILOVER", "amount_usd": "10.00", "method": "LTC"}
	st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-BEFORE", "amount_usd": "10.00", "method": "LTC"})
	if st != 201 {
		t.Fatalf("create before: %d %s", st, body)
	}
	var before struct{ ID string }
	_ = json.Unmarshal(body, &before)

	do := func(method, path string, body any) *http.Response {
		t.Helper()
		raw, _ := json.Marshal(body)
		if body == nil {
			raw = nil
		}
		req, _ := http.NewRequest(method, e.Server.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+e.Keys["storefront"])
		req.Header.Set("Idempotency-Key", "failover-1")
		resp, err := e.Server.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	p.Blackhole()
	for _, c := range []struct {
		method, path string
		body         any
	}{{"POST", "/v1/intents", order}, {"GET", "/v1/intents/" + before.ID, nil}} {
		start := time.Now()
		resp := do(c.method, c.path, c.body)
		var eb struct{ Error struct{ Code string } }
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		resp.Body.Close()
		if resp.StatusCode != 503 || eb.Error.Code != "database_unavailable" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s %s while the database is away: %d %q Retry-After %q", c.method, c.path, resp.StatusCode, eb.Error.Code, resp.Header.Get("Retry-After"))
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("%s %s took %v to fail", c.method, c.path, d)
		}
	}
	p.Open()
	var resp *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp = do("POST", "/v1/intents", order)
		resp.Body.Close()
		if resp.StatusCode != 503 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if resp.StatusCode != 201 {
		t.Fatalf("the retry once the database answers: %d", resp.StatusCode)
	}
	conn, err := pgx.Connect(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM intents i JOIN payables p ON p.id = i.payable_id WHERE p.reference = 'ORD-FAILOVER'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d intents for the order, want 1", n)
	}
}
