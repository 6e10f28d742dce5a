package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

func errCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not an api/openapi.yaml error body: %s", body)
	}
	return e.Error.Code
}

// Every bad request gets its documented status and code, and changes nothing.
func TestBadRequestsChangeNothing(t *testing.T) {
	e := paywatchtest.New(t)
	good := map[string]string{"kind": "order", "reference": "ORD-7", "account": "cust-1", "amount_usd": "249.00", "method": "BTC"}
	with := func(k, v string) map[string]string {
		m := maps.Clone(good)
		m[k] = v
		return m
	}
	// One successful create under an idempotency key, to test its reuse.
	if st, body := e.Do("POST", "/v1/intents", "storefront", good, "Idempotency-Key", "k1"); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	e.Config.Methods["SOL"].Enabled = false
	cases := []struct {
		name    string
		scope   string
		body    any
		headers []string
		status  int
		code    string
	}{
		{"unknown method", "storefront", with("method", "DOGE"), nil, 400, "unknown_method"},
		{"disabled method", "storefront", with("method", "SOL"), nil, 400, "method_disabled"},
		{"negative usd", "storefront", with("amount_usd", "-5.00"), nil, 400, "invalid_amount"},
		{"three decimals", "storefront", with("amount_usd", "249.001"), nil, 400, "invalid_amount"},
		{"zero usd", "storefront", with("amount_usd", "0.00"), nil, 400, "invalid_amount"},
		{"usd as number", "storefront", `{"kind":"order","reference":"ORD-8","amount_usd":249,"method":"BTC"}`, nil, 400, "invalid_request"},
		{"topup not allowed", "storefront", map[string]string{"kind": "topup", "reference": "T-1", "account": "cust-1", "amount_usd": "150.00", "method": "BTC"}, nil, 400, "invalid_amount"},
		{"topup without account", "storefront", map[string]string{"kind": "topup", "reference": "T-2", "amount_usd": "100.00", "method": "BTC"}, nil, 400, "invalid_request"},
		{"unknown kind", "storefront", with("kind", "gift"), nil, 400, "invalid_request"},
		{"bad reference", "storefront", with("reference", "has space"), nil, 400, "invalid_request"},
		{"unknown field", "storefront", `{"kind":"order","reference":"ORD-9","amount_usd":"1.00","method":"BTC","discount":"5"}`, nil, 400, "invalid_request"},
		{"trailing data", "storefront", `{"kind":"order","reference":"ORD-9","amount_usd":"1.00","method":"BTC"} {}`, nil, 400, "invalid_request"},
		{"not json", "storefront", `kind=order`, nil, 400, "invalid_request"},
		{"empty body", "storefront", ``, nil, 400, "invalid_request"},
		{"2 MB body", "storefront", `{"kind":"order","reference":"` + strings.Repeat("A", 2<<20) + `"}`, nil, 413, "body_too_large"},
		{"missing key", "", good, nil, 401, "unauthorized"},
		{"wrong scope", "finance", good, nil, 403, "forbidden"},
		{"reused idempotency key, other body", "storefront", with("amount_usd", "250.00"), []string{"Idempotency-Key", "k1"}, 409, "idempotency_mismatch"},
		{"same payable, other amount", "storefront", with("amount_usd", "300.00"), nil, 409, "conflict"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.Counts()
			st, body := e.Do("POST", "/v1/intents", c.scope, c.body, c.headers...)
			if st != c.status {
				t.Fatalf("status %d, want %d: %.300s", st, c.status, body)
			}
			if got := errCode(t, body); got != c.code {
				t.Fatalf("code %q, want %q", got, c.code)
			}
			if after := e.Counts(); !maps.Equal(before, after) {
				t.Fatalf("database changed: before %v after %v", before, after)
			}
		})
	}
	// A wrong bearer key is 401 too.
	req, _ := http.NewRequest("GET", e.Server.URL+"/v1/methods", nil)
	req.Header.Set("Authorization", "Bearer pw_nope")
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
}

func TestIdempotentCreateReturnsTheFirstResponse(t *testing.T) {
	e := paywatchtest.New(t)
	body := map[string]string{"kind": "order", "reference": "ORD-1", "amount_usd": "10.00", "method": "LTC"}
	st1, b1 := e.Do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "abc")
	st2, b2 := e.Do("POST", "/v1/intents", "storefront", body, "Idempotency-Key", "abc")
	if st1 != 201 || st2 != 201 || string(b1) != string(b2) {
		t.Fatalf("replay differs: %d %s / %d %s", st1, b1, st2, b2)
	}
	if n := e.Counts()["intents"]; n != 1 {
		t.Fatalf("%d intents, want 1", n)
	}
}

func TestConcurrentCreationsNeverShareAnAddress(t *testing.T) {
	e := paywatchtest.New(t)
	const n = 40
	addrs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			method := []string{"BTC", "ETH", "USDT-ERC20", "TRX"}[i%4]
			st, body := e.Do("POST", "/v1/intents", "storefront", map[string]string{
				"kind": "order", "reference": fmt.Sprintf("ORD-%d", i), "amount_usd": "5.00", "method": method})
			if st != 201 {
				t.Errorf("create %d: %d %s", i, st, body)
				return
			}
			var v views.Intent
			_ = json.Unmarshal(body, &v)
			addrs[i] = v.Network + "/" + v.Address
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("address %s handed out twice", a)
		}
		seen[a] = true
	}
}

func TestIntentLifecycleEndpoints(t *testing.T) {
	e := paywatchtest.New(t)
	v := e.CreateIntent("topup", "TOPUP-1", "cust-9", "100.00", "USDT-TRC20")
	if v.AmountBaseUnits != "100000000" || !strings.HasPrefix(v.PaymentURI, "tron:"+v.Address+"?amount=100&token=") {
		t.Fatalf("intent: %+v", v)
	}
	// Report is idempotent and changes no status.
	for i := 0; i < 2; i++ {
		st, body := e.Do("POST", "/v1/intents/"+v.ID+"/report", "storefront", nil)
		var got views.Intent
		_ = json.Unmarshal(body, &got)
		if st != 200 || got.ReportedAt == nil || got.Status != "awaiting_payment" {
			t.Fatalf("report: %d %s", st, body)
		}
	}
	// Renewing a live intent is refused; after the deadline it works.
	if st, body := e.Do("POST", "/v1/intents/"+v.ID+"/renew", "storefront", nil); st != 409 || errCode(t, body) != "conflict" {
		t.Fatalf("renew live intent: %d %s", st, body)
	}
	e.Clock.Advance(31 * 60e9)
	e.Sync("tron")
	st, body := e.Do("POST", "/v1/intents/"+v.ID+"/renew", "storefront", nil)
	if st != 201 {
		t.Fatalf("renew: %d %s", st, body)
	}
	var renewed views.Intent
	_ = json.Unmarshal(body, &renewed)
	if renewed.ID == v.ID || renewed.Address == v.Address || renewed.RenewedFrom == nil || *renewed.RenewedFrom != v.ID {
		t.Fatalf("renewed: %+v", renewed)
	}
	if old := e.Intent(v.ID); old.Status != "superseded" || old.SupersededBy == nil || *old.SupersededBy != renewed.ID {
		t.Fatalf("old intent: %+v", old)
	}
	st, body = e.Do("GET", "/v1/payables/topup/TOPUP-1", "storefront", nil)
	if st != 200 || !strings.Contains(string(body), `"status":"unpaid"`) || strings.Count(string(body), `"id":"pi_`) != 2 {
		t.Fatalf("payable: %d %s", st, body)
	}
	st, body = e.Do("GET", "/v1/intents/"+v.ID+"/qr.png", "storefront", nil)
	if st != 200 || !strings.HasPrefix(string(body), "\x89PNG") {
		t.Fatalf("qr: %d", st)
	}
	if st, body := e.Do("GET", "/v1/intents/pi_nope", "storefront", nil); st != 404 || errCode(t, body) != "not_found" {
		t.Fatalf("unknown intent: %d %s", st, body)
	}
	if st, _ := e.Do("GET", "/healthz", "", nil); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	if st, body := e.Do("GET", "/readyz", "", nil); st != 200 {
		t.Fatalf("readyz %d %s", st, body)
	}
}

func TestMethodsAndStatus(t *testing.T) {
	e := paywatchtest.New(t)
	st, body := e.Do("GET", "/v1/methods", "storefront", nil)
	var ms []struct {
		Method    string
		Available bool
		Reason    string
	}
	if err := json.Unmarshal(body, &ms); st != 200 || err != nil || len(ms) != 8 {
		t.Fatalf("methods: %d %s", st, body)
	}
	for _, m := range ms {
		if !m.Available {
			t.Fatalf("%s unavailable: %s", m.Method, m.Reason)
		}
	}
	if st, _ := e.Do("GET", "/v1/status", "storefront", nil); st != 403 {
		t.Fatalf("status with storefront key: %d", st)
	}
	st, body = e.Do("GET", "/v1/status", "operator", nil)
	if st != 200 || !strings.Contains(string(body), `"network":"solana"`) || !strings.Contains(string(body), `"pool_remaining":10`) {
		t.Fatalf("status: %d %s", st, body)
	}
}
