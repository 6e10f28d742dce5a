package console_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// oldWebhookRows stores an endpoint as a daemon before redaction did: the
// URL with its credentials and token, and errors quoting it.
func oldWebhookRows(t *testing.T, s *site) {
	t.Helper()
	ctx := context.Background()
	raw := "https://hookuser:pa55word@shop.example/hook?token=T0KEN123"
	if err := s.Store.EnsureWebhookEndpoint(ctx, "old", raw, "", false, time.Now()); err != nil {
		t.Fatal(err)
	}
	msg := `Post "https://hookuser:***@shop.example/hook?token=T0KEN123": dial tcp: connection refused`
	if _, err := s.Store.Pool().Exec(ctx, `UPDATE webhook_endpoints SET last_error = $1, attempts = 1 WHERE name = 'old'`, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store.Pool().Exec(ctx, `INSERT INTO webhook_attempts (endpoint, event_seq, event_id, error, duration_ms, created_at, outcome)
		VALUES ('old', 1, 'ev_x', $1, 5, now(), 'retry')`, msg); err != nil {
		t.Fatal(err)
	}
}

// Webhook URLs and delivery errors are shown redacted by the API and the
// console, also for rows a daemon stored before it redacted them.
func TestWebhookURLsAreShownRedacted(t *testing.T) {
	s := newSite(t)
	oldWebhookRows(t, s)
	c := s.client(t)
	c.signIn(t, s.Keys["operator"])
	_, page := c.get(t, "/console/webhooks")
	answers := map[string]string{"console page": page}
	for _, path := range []string{"/v1/webhooks", "/v1/webhooks/deliveries"} {
		status, body := s.Do("GET", path, "operator", nil)
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		answers[path] = string(body)
	}
	for what, text := range answers {
		if !strings.Contains(text, "shop.example/hook") {
			t.Errorf("the %s does not show the endpoint at all: %.600s", what, text)
		}
		for _, secret := range []string{"pa55word", "T0KEN123", "hookuser"} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s shows %q", what, secret)
			}
		}
	}
}
