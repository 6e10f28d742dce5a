package openapitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/api/openapitest"
)

// Check accepts what the document describes and refuses each way an answer
// can differ from it.
func TestCheck(t *testing.T) {
	d, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	balance := `{"account":"cust-17","available_usd":"600.00","pending_usd":"100.00"}`
	errBody := func(code string) string { return `{"error":{"code":"` + code + `","message":"m"}}` }
	cases := []struct {
		name, method, path string
		status             int
		ctype, body        string
		header             [2]string
		wantErr            string // "" means accepted
	}{
		{"documented", "GET", "/v1/accounts/cust-17/balance", 200, "application/json", balance, [2]string{}, ""},
		{"status not listed", "GET", "/v1/accounts/cust-17/balance", 409, "application/json", errBody("conflict"), [2]string{}, "no 409"},
		{"extra field", "GET", "/v1/accounts/cust-17/balance", 200, "application/json",
			`{"account":"cust-17","available_usd":"600.00","pending_usd":"100.00","secret":"x"}`, [2]string{}, "doesn't match"},
		{"missing field", "GET", "/v1/accounts/cust-17/balance", 200, "application/json", `{"account":"cust-17","available_usd":"600.00"}`, [2]string{}, "doesn't match"},
		{"amount as number", "GET", "/v1/accounts/cust-17/balance", 200, "application/json",
			`{"account":"cust-17","available_usd":600,"pending_usd":"100.00"}`, [2]string{}, "doesn't match"},
		{"undocumented content type", "GET", "/v1/accounts/cust-17/balance", 200, "text/html; charset=utf-8", "<p>hi</p>", [2]string{}, "Content-Type"},
		{"error code of another status", "GET", "/v1/intents/pi_01JD3K7W9ZC8X5Q2R4T6V8Y0AB", 404, "application/json", errBody("conflict"), [2]string{}, "doesn't match"},
		{"401 without WWW-Authenticate", "GET", "/v1/status", 401, "application/json", errBody("unauthorized"), [2]string{}, "WWW-Authenticate"},
		{"401 with it", "GET", "/v1/status", 401, "application/json", errBody("unauthorized"), [2]string{"WWW-Authenticate", `Bearer realm="paywatch"`}, ""},
		{"429 without Retry-After", "GET", "/v1/events?wait=30s", 429, "application/json", errBody("rate_limited"), [2]string{}, "Retry-After"},
		{"not a PNG", "GET", "/v1/intents/pi_01JD3K7W9ZC8X5Q2R4T6V8Y0AB/qr.png", 200, "image/png", "GIF89a", [2]string{}, "not a PNG"},
		{"redirect", "GET", "/v1/methods", 307, "text/html", "<a>", [2]string{}, "no 307"},
		{"unknown route 404", "GET", "/v1/nope", 404, "application/json", errBody("not_found"), [2]string{}, ""},
		{"unknown route 200", "GET", "/v1/nope", 200, "application/json", `{}`, [2]string{}, "not 404"},
		{"unknown method", "DELETE", "/v1/methods", 405, "text/plain", "Method Not Allowed", [2]string{}, "not 404"},
		{"dot segments are no route", "GET", "/v1/accounts/../balance", 200, "application/json", balance, [2]string{}, "not 404"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://127.0.0.1:1"+c.path, nil)
			h := http.Header{"Content-Type": {c.ctype}}
			if c.header[0] != "" {
				h.Set(c.header[0], c.header[1])
			}
			err := d.Check(req, c.status, h, []byte(c.body))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatalf("accepted, want an error naming %q", c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error %q does not name %q", err, c.wantErr)
			}
		})
	}
}

// Handler fails the test of an answer the document does not describe.
func TestHandlerFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	h := openapitest.Handler(rec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"status":"sleeping"}`))
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
	if w.Code != 200 || w.Body.String() != `{"status":"sleeping"}` {
		t.Fatalf("the answer did not pass through: %d %s", w.Code, w.Body)
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "GET /healthz") {
		t.Fatalf("errors %q, want one about GET /healthz", rec.errors)
	}
}

type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
