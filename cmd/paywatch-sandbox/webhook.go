package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The sandbox's webhooks (`--webhook URL`, repeatable): every event is
// delivered to each URL, signed with one secret kept in webhook.secret
// and written to sandbox.env, so a receiver can be tried against the
// sandbox (docs/webhooks has receivers in Go, Node, Python and PHP).
const (
	envWebhookSecret = "PAYWATCH_WEBHOOK_SECRET"
	envWebhookURLs   = "PAYWATCH_WEBHOOK_URLS"
	// webhookSecretEnv is the variable the sandbox's config names; the
	// daemon gets it in its environment.
	webhookSecretEnv = "PAYWATCH_WEBHOOK_SANDBOX_SECRET"
)

// urlList collects a repeatable flag.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }

func (l *urlList) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return fmt.Errorf("empty URL")
	}
	*l = append(*l, v)
	return nil
}

// webhooksConfig is the webhooks section of the sandbox's paywatch.yaml:
// one endpoint per URL (sandbox, sandbox-2, ...), every event, starting
// with the events recorded from this start on.
func webhooksConfig(urls []string) string {
	if len(urls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("webhooks:   # paywatch-sandbox --webhook URL\n")
	for i, u := range urls {
		name := "sandbox"
		if i > 0 {
			name = fmt.Sprintf("sandbox-%d", i+1)
		}
		fmt.Fprintf(&b, "  - name: %s\n    url: %q\n    secret_env: %s\n    start: now\n", name, u, webhookSecretEnv)
	}
	return b.String()
}

// fileSecret returns the 32-byte hex secret kept in path, made (mode 0600)
// on first use, so it stays the same across restarts.
func fileSecret(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	secret := hex.EncodeToString(raw[:])
	return secret, writeFileAtomic(path, []byte(secret+"\n"), 0o600)
}

// webhookSecret is the secret the sandbox's webhooks are signed with.
func (s *sandbox) webhookSecret() (string, error) {
	return fileSecret(filepath.Join(s.dir, "webhook.secret"))
}
