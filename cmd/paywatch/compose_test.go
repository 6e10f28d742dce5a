package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/webhooks"
)

// composeFile is the part of docker-compose.yml the tests read.
type composeFile struct {
	Services map[string]struct {
		Build struct {
			Context string `yaml:"context"`
		} `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}`)

// expandCompose expands ${V}, ${V:-default} and ${V:?message} as docker
// compose does from its .env (an unset or empty V with :? is an error).
func expandCompose(s string, dotenv map[string]string) (string, error) {
	var err error
	out := composeVar.ReplaceAllStringFunc(s, func(m string) string {
		p := composeVar.FindStringSubmatch(m)
		v := dotenv[p[1]]
		switch {
		case v != "":
			return v
		case p[2] == ":-":
			return p[3]
		case p[2] == ":?":
			err = fmt.Errorf("%s: %s", p[1], p[3])
		}
		return ""
	})
	return out, err
}

// composeEnv is the paywatch service's environment with dotenv, as
// `docker compose up` gives it to the container.
func composeEnv(t *testing.T, c composeFile, dotenv map[string]string) (map[string]string, error) {
	t.Helper()
	env := map[string]string{}
	for k, v := range c.Services["paywatch"].Environment {
		x, err := expandCompose(v, dotenv)
		if err != nil {
			return nil, err
		}
		env[k] = x
	}
	return env, nil
}

// entrypoint runs deploy/docker/entrypoint.sh with env (and nothing else
// from this process's environment but PATH), as the image runs it.
type entrypoint struct {
	script string
	env    map[string]string
}

func (e entrypoint) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", append([]string{e.script}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range e.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func (e entrypoint) run(ctx context.Context, args ...string) (string, error) {
	out, err := e.cmd(ctx, args...).CombinedOutput()
	return string(out), err
}

// The compose stack's files, read as docker compose reads them: the build
// context leaves out the sandbox's data, binaries, git and .env; the
// paywatch service mounts no config (the entrypoint writes it from the
// environment), passes every variable of deploy/docker/env.example, keeps
// its state (the first API key) in a volume, publishes on loopback only
// and checks health with the entrypoint; the image runs the entrypoint;
// and POSTGRES_PASSWORD is required (issue 36 item 7).
func TestComposeFilesGiveAWorkingStack(t *testing.T) {
	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatalf(".dockerignore: %v (the build context would carry .paywatch/ with a PostgreSQL data directory)", err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(ignore), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, must := range []string{".paywatch", "bin", ".git", ".env"} {
		if !lines[must] {
			t.Errorf(".dockerignore does not leave out %s", must)
		}
	}
	c := readCompose(t)
	pw, ok := c.Services["paywatch"]
	if !ok {
		t.Fatal("docker-compose.yml has no paywatch service")
	}
	if pw.Build.Context != "." {
		t.Errorf("paywatch builds from %q, want the repository", pw.Build.Context)
	}
	for _, v := range pw.Volumes {
		if strings.Contains(v, ".yaml") || strings.Contains(v, "config/") {
			t.Errorf("paywatch mounts %q: the entrypoint writes the config from the environment", v)
		}
	}
	if strings.Join(pw.Volumes, " ") != "paywatch-state:/var/lib/paywatch" {
		t.Errorf("paywatch volumes %v, want the state volume the first API key is written to", pw.Volumes)
	}
	for _, p := range pw.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %q is published beyond the host's loopback", p)
		}
	}
	if got := strings.Join(pw.Healthcheck.Test, " "); got != "CMD /usr/local/bin/paywatch-entrypoint health" {
		t.Errorf("healthcheck %q, want the entrypoint's health (fails unless every enabled network is healthy)", got)
	}
	if got := strings.Join(pw.Command, " "); got != "serve" {
		t.Errorf("command %q, want serve", got)
	}
	docker, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"COPY deploy/docker/entrypoint.sh /usr/local/bin/paywatch-entrypoint",
		"COPY deploy/docker/paywatch.yaml /etc/paywatch/paywatch.yaml", `ENTRYPOINT ["/usr/local/bin/paywatch-entrypoint"]`,
		"chown 65532:65532 /var/lib/paywatch"} {
		if !strings.Contains(string(docker), must) {
			t.Errorf("the Dockerfile lacks %q", must)
		}
	}
	example, err := os.ReadFile("../../deploy/docker/env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(example), "\n") {
		name, _, ok := strings.Cut(l, "=")
		if !ok || strings.HasPrefix(l, "#") || name == "POSTGRES_PASSWORD" {
			continue
		}
		if v, ok := pw.Environment[name]; !ok || !strings.Contains(v, "${"+name) {
			t.Errorf("env.example's %s is not passed to paywatch (environment: %q)", name, v)
		}
	}
	if _, err := composeEnv(t, c, map[string]string{}); err == nil || !strings.Contains(err.Error(), "POSTGRES_PASSWORD") {
		t.Errorf("an .env without POSTGRES_PASSWORD: %v, want it refused", err)
	}
}

// The image's entrypoint with the compose file's exact environment (the
// database host aside: the test's PostgreSQL stands in for the postgres
// service; and the rates: static, as no price source is reachable here):
// it refuses to start with no network enabled or a node without its key;
// with a filled .env it watches the network the .env names, makes the
// first API key once into the state directory (not the log), serves the
// payment page with the checkout secret, delivers webhooks signed with
// the webhook secret; its health check passes while the network is
// healthy and fails when the node is gone (issue 36 item 7).
func TestComposeEntrypointRunsTheStack(t *testing.T) {
	db := devnettest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a safety net on a loaded machine
	defer cancel()
	btcd, err := devnet.StartBtcd(ctx, t.TempDir(), 0)
	devnettest.Need(t, "btcd", err)
	defer btcd.Stop()
	dir := t.TempDir()
	bin := filepath.Join(dir, "paywatch")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The image's base config, its rates made static.
	base, err := os.ReadFile("../../deploy/docker/paywatch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rates := regexp.MustCompile(`(?m)^rates:\n(?:  .*\n)+`)
	if !rates.Match(base) {
		t.Fatalf("no rates section in deploy/docker/paywatch.yaml:\n%s", base)
	}
	base = rates.ReplaceAll(base, []byte("rates: {sources: [static], min_sources: 1, static: {BTC: \"60000\"}, refresh: \"@every 1s\"}\n"))
	basePath := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(basePath, base, 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../deploy/docker/entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	adminPort, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	plumbing := map[string]string{"PAYWATCH_BIN": bin, "PAYWATCH_BASE_CONFIG": basePath, "PAYWATCH_CONFIG": filepath.Join(dir, "run", "paywatch.yaml"),
		"PAYWATCH_STATE_DIR": state, "PAYWATCH_LISTEN": fmt.Sprintf("127.0.0.1:%d", port), "PAYWATCH_ADMIN_LISTEN": fmt.Sprintf("127.0.0.1:%d", adminPort)}
	c := readCompose(t)
	entry := func(dotenv map[string]string) entrypoint {
		t.Helper()
		env, err := composeEnv(t, c, dotenv)
		if err != nil {
			t.Fatal(err)
		}
		if want := "postgres://paywatch:" + dotenv["POSTGRES_PASSWORD"] + "@postgres:5432/paywatch?sslmode=disable"; env["PAYWATCH_DATABASE_URL"] != want {
			t.Fatalf("compose's database URL %q, want %q", env["PAYWATCH_DATABASE_URL"], want)
		}
		env["PAYWATCH_DATABASE_URL"] = db
		for k, v := range plumbing {
			env[k] = v
		}
		return entrypoint{script: script, env: env}
	}

	// Refused: no network, or a node without its account key.
	if out, err := entry(map[string]string{"POSTGRES_PASSWORD": "pw"}).run(ctx, "serve"); err == nil || !strings.Contains(out, "no network is enabled") {
		t.Fatalf("with no network: %v\n%s", err, out)
	}
	if out, err := entry(map[string]string{"POSTGRES_PASSWORD": "pw", "PAYWATCH_BITCOIN_RPC_URL": btcd.RPCURL}).run(ctx, "serve"); err == nil ||
		!strings.Contains(out, "PAYWATCH_BITCOIN_ACCOUNT_KEY") {
		t.Fatalf("a node without its key: %v\n%s", err, out)
	}

	webhookSecret := strings.Repeat("w", 40)
	var mu sync.Mutex
	var delivered []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhooks.Verify([]byte(webhookSecret), r.Header.Get(webhooks.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var ev struct{ Type string }
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		delivered = append(delivered, ev.Type)
		mu.Unlock()
	}))
	defer recv.Close()
	dotenv := map[string]string{
		"POSTGRES_PASSWORD": "compose-pw", "PAYWATCH_CHAIN": "regtest",
		"PAYWATCH_BITCOIN_RPC_URL": btcd.RPCURL, "PAYWATCH_BITCOIN_ACCOUNT_KEY": addresses.SandboxKeys[payment.Bitcoin],
		"PAYWATCH_PUBLIC_URL": "https://pay.shop.example", "PAYWATCH_CHECKOUT_SECRET": strings.Repeat("c", 40),
		"PAYWATCH_STOREFRONT_NAME": "Compose shop",
		"PAYWATCH_WEBHOOK_URL":     recv.URL, "PAYWATCH_WEBHOOK_SECRET": webhookSecret,
	}
	e := entry(dotenv)
	var log bytes.Buffer
	var logMu sync.Mutex
	serve := func() (*exec.Cmd, chan error) {
		cmd := e.cmd(ctx, "serve")
		w := writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) })
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, done
	}
	stop := func(cmd *exec.Cmd, done chan error) {
		_ = cmd.Process.Signal(syscall.SIGTERM) // exec'd: the signal reaches paywatch serve
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	logText := func() string { logMu.Lock(); defer logMu.Unlock(); return log.String() }
	cmd, done := serve()
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case err := <-done:
				t.Fatalf("the entrypoint ended (%v) while waiting for %s:\n%s", err, what, logText())
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v\n%s", what, ctx.Err(), logText())
			case <-time.After(100 * time.Millisecond): // polling a condition another process makes true
			}
		}
	}
	keyFile := filepath.Join(state, "first-api-key")
	var key string
	waitUntil("the first API key", func() bool {
		b, err := os.ReadFile(keyFile)
		key = strings.TrimSpace(string(b))
		return err == nil && strings.HasPrefix(key, "pw_")
	})
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v, want mode 0600", st.Mode(), err)
	}
	if strings.Contains(logText(), key) {
		t.Fatal("the first API key is in the log")
	}
	api := apiCaller(t, "http://"+plumbing["PAYWATCH_LISTEN"], key)
	waitUntil("the API", func() bool {
		resp, err := http.Get("http://" + plumbing["PAYWATCH_LISTEN"] + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	waitUntil("the health check to pass", func() bool {
		_, err := e.run(ctx, "health")
		return err == nil
	})
	st, status, raw := api("GET", "/v1/status", nil)
	if st != 200 {
		t.Fatalf("status: %d %s", st, raw)
	}
	for _, n := range status["networks"].([]any) {
		n := n.(map[string]any)
		if want := n["network"] == "bitcoin"; n["enabled"] != want {
			t.Errorf("%s enabled=%v: the .env names bitcoin only", n["network"], n["enabled"])
		}
	}
	var in map[string]any
	waitUntil("a BTC intent", func() bool {
		st, v, _ := api("POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-COMPOSE", "amount_usd": "25.00", "method": "BTC"})
		in = v
		return st == 201 || st == 200
	})
	if page, _ := in["payment_page_url"].(string); !strings.HasPrefix(page, "https://pay.shop.example/pay/") {
		t.Fatalf("payment page %q: the checkout is not on with PAYWATCH_PUBLIC_URL", page)
	}
	waitUntil("a signed webhook", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(delivered, " "), "intent.created")
	})

	// The node goes away: the health check fails, naming it.
	btcd.Kill()
	var out string
	waitUntil("the health check to fail", func() bool {
		out, err = e.run(ctx, "health")
		return err != nil
	})
	if !strings.Contains(out, "bitcoin") {
		t.Fatalf("failing health says %q, want it to name bitcoin", out)
	}
	stop(cmd, done)

	// A second start makes no second key.
	cmd, done = serve()
	waitUntil("the API again", func() bool {
		resp, err := http.Get("http://" + plumbing["PAYWATCH_LISTEN"] + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	stop(cmd, done)
	list, err := e.run(ctx, "apikey", "list")
	if err != nil || strings.Count(list, "admin") != 1 {
		t.Fatalf("after two starts the keys are:\n%s (%v)", list, err)
	}
	if b, _ := os.ReadFile(keyFile); strings.TrimSpace(string(b)) != key {
		t.Fatal("the second start rewrote the first key's file")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
