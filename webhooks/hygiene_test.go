package webhooks_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/webhooks"
)

const (
	secretA = "0123456789abcdef0123456789abcdef-current"
	secretB = "fedcba9876543210fedcba9876543210-next"
)

// Secrets shorter than 32 bytes are refused (an HMAC key an attacker can
// guess signs forged events); the error names the endpoint and the
// variable and never echoes the secret. A rotation's next secret is held
// to the same rule and must differ from the current one.
func TestFromConfigRefusesShortSecrets(t *testing.T) {
	hook := config.Webhook{Name: "shop", URL: "https://shop.example/hook", SecretEnv: "SHOP_SECRET"}
	short := "only-thirty-one-bytes-long-abcd"
	for _, c := range []struct {
		name    string
		hook    config.Webhook
		env     map[string]string
		mention string
	}{
		{"short secret", hook, map[string]string{"SHOP_SECRET": short}, "SHOP_SECRET"},
		{"short next secret", withNext(hook), map[string]string{"SHOP_SECRET": secretA, "SHOP_NEXT": short}, "SHOP_NEXT"},
		{"next secret unset", withNext(hook), map[string]string{"SHOP_SECRET": secretA}, "SHOP_NEXT"},
		{"next secret equal to the current", withNext(hook), map[string]string{"SHOP_SECRET": secretA, "SHOP_NEXT": secretA}, "SHOP_NEXT"},
	} {
		_, err := webhooks.FromConfig([]config.Webhook{c.hook}, func(k string) string { return c.env[k] })
		if err == nil || !strings.Contains(err.Error(), "shop") || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v, want an error naming the endpoint and %s", c.name, err, c.mention)
			continue
		}
		if strings.Contains(err.Error(), short) || strings.Contains(err.Error(), secretA) {
			t.Errorf("%s: the error echoes a secret: %v", c.name, err)
		}
	}
	eps, err := webhooks.FromConfig([]config.Webhook{withNext(hook)}, func(k string) string {
		return map[string]string{"SHOP_SECRET": secretA, "SHOP_NEXT": secretB}[k]
	})
	if err != nil || len(eps) != 1 || string(eps[0].Secret) != secretA || string(eps[0].NextSecret) != secretB {
		t.Fatalf("a rotation's endpoint: %+v %v", eps, err)
	}
}

func withNext(h config.Webhook) config.Webhook {
	h.NextSecretEnv = "SHOP_NEXT"
	return h
}

// During a rotation every delivery carries a v1 signature under the
// current secret and one under the next: a receiver that has switched and
// one that has not both verify it.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	e := paywatchtest.New(t)
	e.CreateIntent("order", "ORD-ROT", "", "10.00", "BTC")
	var mu sync.Mutex
	var headers []string
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		mu.Lock()
		headers = append(headers, r.Header.Get(webhooks.SignatureHeader))
		bodies = append(bodies, b.Bytes())
		mu.Unlock()
	}))
	defer srv.Close()
	s := start(e.Store, webhooks.Endpoint{Name: "rot", URL: srv.URL, Secret: []byte(secretA), NextSecret: []byte(secretB)},
		webhooks.Options{Poll: 50 * time.Millisecond})
	waitCursor(t, e.Store, "rot")
	s.stop(t)
	mu.Lock()
	defer mu.Unlock()
	if len(headers) == 0 {
		t.Fatal("nothing delivered")
	}
	for i, h := range headers {
		if strings.Count(h, "v1=") != 2 {
			t.Fatalf("signature header %q has not two v1 values", h)
		}
		for _, secret := range []string{secretA, secretB} {
			if err := webhooks.Verify([]byte(secret), h, bodies[i], time.Now(), 5*time.Minute); err != nil {
				t.Fatalf("a receiver on %.8s… rejects %q: %v", secret, h, err)
			}
		}
		if err := webhooks.Verify([]byte("another-secret-of-more-than-32-bytes"), h, bodies[i], time.Now(), 5*time.Minute); !errors.Is(err, webhooks.ErrBadSignature) {
			t.Fatalf("a third secret verifies: %v", err)
		}
	}
}

// An endpoint URL's credentials and query values never reach the database,
// the delivery log, an error text or a log line: a delivery that fails
// (nothing listens there) records the failure with the URL redacted.
func TestEndpointURLIsRedactedInRecordsAndLogs(t *testing.T) {
	e := paywatchtest.New(t)
	e.CreateIntent("order", "ORD-RED", "", "10.00", "BTC")
	raw := "http://hookuser:pa55word@127.0.0.1:1/hook?token=T0KEN123&shop=7"
	var logs syncBuf
	s := start(e.Store, webhooks.Endpoint{Name: "red", URL: raw, Secret: []byte(secretA)},
		webhooks.Options{Poll: 50 * time.Millisecond, MinBackoff: time.Hour, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	waitFor(t, "a failed attempt", 30*time.Second, func() bool {
		var n int
		err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_attempts WHERE endpoint = 'red'`).Scan(&n)
		return err == nil && n > 0
	})
	s.stop(t)
	var url, lastError, attemptError string
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT e.url, e.last_error, a.error FROM webhook_endpoints e
		JOIN webhook_attempts a ON a.endpoint = e.name WHERE e.name = 'red'`).Scan(&url, &lastError, &attemptError); err != nil {
		t.Fatal(err)
	}
	if attemptError == "" || !strings.Contains(attemptError, "127.0.0.1:1") {
		t.Fatalf("the attempt's error %q does not say where it failed", attemptError)
	}
	for what, text := range map[string]string{"stored url": url, "last_error": lastError, "attempt error": attemptError, "logs": logs.String()} {
		for _, secret := range []string{"pa55word", "T0KEN123", "hookuser"} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds %q: %s", what, secret, text)
			}
		}
	}
	if url != "http://REDACTED@127.0.0.1:1/hook?shop=REDACTED&token=REDACTED" {
		t.Errorf("stored url %q", url)
	}
}

// The redaction keeps what tells endpoints apart (scheme, host, path,
// parameter names) and drops user info, query values and fragments, in a
// URL alone or inside a text.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://shop.example/hook":                        "https://shop.example/hook",
		"https://u:p@shop.example:8443/h?token=s&x=1#frag": "https://REDACTED@shop.example:8443/h?token=REDACTED&x=REDACTED",
		"https://tok3n@shop.example/h":                     "https://REDACTED@shop.example/h",
		"::not a url":                                      "(unparseable URL)",
	} {
		if got := webhooks.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	text := `Post "https://u:xxxxx@shop.example/h?token=s3cr3t": dial tcp 10.0.0.1:443: connect: connection refused`
	if got := webhooks.RedactText(text); strings.Contains(got, "s3cr3t") || !strings.Contains(got, "https://REDACTED@shop.example/h?token=REDACTED") ||
		!strings.Contains(got, "connection refused") {
		t.Errorf("RedactText = %q", got)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
