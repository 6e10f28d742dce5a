package daemon_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/webhooks"
)

func TestDaemonRunsOneSenderPerWebhook(t *testing.T) {
	e := paywatchtest.New(t)
	e.CreateIntent("order", "ORD-HOOK", "", "10.00", "ETH")
	got := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhooks.Verify([]byte(hookSecret), r.Header.Get(webhooks.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		got <- string(body)
	}))
	defer srv.Close()
	cfg := *e.Config
	cfg.Webhooks = []config.Webhook{{Name: "shop", URL: srv.URL, SecretEnv: "PAYWATCH_TEST_HOOK_SECRET"}}
	secret := ""
	getenv := func(k string) string {
		if k == "PAYWATCH_TEST_HOOK_SECRET" {
			return secret
		}
		return ""
	}
	d, err := daemon.New(t.Context(), &cfg, daemon.Deps{Store: e.Store, Sources: e.Sources(), Quotes: e.Daemon.Quotes(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	svcs := d.WebhookSenders()
	if len(svcs) != 1 {
		t.Fatalf("%d services without a secret", len(svcs))
	}
	if err := svcs[0](context.Background()); !errors.Is(err, webhooks.ErrNoSecret) {
		t.Fatalf("missing secret: %v", err)
	}

	secret = hookSecret
	svcs = d.WebhookSenders()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svcs[0](ctx) }()
	select {
	case body := <-got:
		if !strings.Contains(body, `"type":"intent.created"`) || !strings.Contains(body, "ORD-HOOK") {
			t.Fatalf("delivered %s", body)
		}
	case <-time.After(5 * time.Minute): // generous: a wait for the delivery, not a measure of speed
		t.Fatal("no delivery within 5 minutes")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// hookSecret is a webhook signing secret of the length FromConfig requires.
const hookSecret = "paywatch-test-hook-secret-of-32-bytes-or-more"
