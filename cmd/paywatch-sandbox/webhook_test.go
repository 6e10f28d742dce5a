package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/webhooks"
)

// lines collects a process's output lines and lets a test wait for one.
type lines struct {
	mu    sync.Mutex
	all   []string
	wake  chan struct{}
	ended bool
}

func newLines() *lines { return &lines{wake: make(chan struct{})} }

func (l *lines) add(s string) {
	l.mu.Lock()
	l.all = append(l.all, s)
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

func (l *lines) end() {
	l.mu.Lock()
	l.ended = true
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

// waitLine waits until a line equals want (a receiver prints one line per
// delivery it judged).
func (l *lines) waitLine(t *testing.T, ctx context.Context, who, want string) {
	t.Helper()
	for {
		l.mu.Lock()
		for _, s := range l.all {
			if s == want {
				l.mu.Unlock()
				return
			}
		}
		wake, ended, all := l.wake, l.ended, append([]string(nil), l.all...)
		l.mu.Unlock()
		if ended {
			t.Fatalf("%s ended without printing %q; it printed %q", who, want, all)
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("%s did not print %q: %v; it printed %q", who, want, ctx.Err(), all)
		}
	}
}

// receiver is one of docs/webhooks' examples, running.
type receiver struct {
	name string
	url  string
	out  *lines
}

// startReceiver runs cmd (an example receiver listening on port) and
// waits until its port answers.
func startReceiver(t *testing.T, ctx context.Context, name string, port int, cmd *exec.Cmd) *receiver {
	t.Helper()
	r := &receiver{name: name, url: fmt.Sprintf("http://127.0.0.1:%d/paywatch", port), out: newLines()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the %s receiver: %v", name, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			t.Logf("%s receiver: %s", name, sc.Text())
			r.out.add(sc.Text())
		}
		r.out.end()
	}()
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the %s receiver does not listen on %d: %v", name, port, err)
		case <-time.After(50 * time.Millisecond): // polling a port that is not open yet
		}
	}
}

// post sends body to a receiver as paywatch does, with the signature
// header given, and returns the status.
func post(t *testing.T, ctx context.Context, url, sig, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooks.SignatureHeader, sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func signed(secret string, t time.Time, body string) string {
	ts := t.Unix()
	return "t=" + strconv.FormatInt(ts, 10) + ",v1=" + webhooks.Sign([]byte(secret), ts, []byte(body))
}

// `paywatch-sandbox --webhook URL` delivers every event, signed with the
// secret in sandbox.env, and each receiver example of docs/webhooks (Go,
// Node, Python, PHP) accepts the sandbox's real delivery of an intent's
// creation, answers a repeated event id 2xx without handling it again, and
// refuses a forged signature and a timestamp outside the 5 minute window
// (issue 36 item 3).
func TestSandboxWebhookReceivers(t *testing.T) {
	needSandboxPeers(t)
	goBin, err := exec.LookPath("go")
	devnettest.Need(t, "go", err)
	node, err := exec.LookPath("node")
	devnettest.Need(t, "node", err)
	python, err := exec.LookPath("python3")
	devnettest.Need(t, "python3", err)
	php, err := exec.LookPath("php")
	devnettest.Need(t, "php (Debian: apt-get install php-cli)", err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := sandboxDir(t)
	// The secret the sandbox will sign with (made on its first start, or
	// here first, as a second start finds it).
	secret, err := fileSecret(filepath.Join(dir, "webhook.secret"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Abs("../../docs/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	goReceiver := filepath.Join(t.TempDir(), "receiver")
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", goReceiver, filepath.Join(docs, "receiver.go")).CombinedOutput(); err != nil {
		t.Fatalf("go build docs/webhooks/receiver.go: %v\n%s", err, out)
	}
	var rs []*receiver
	for _, c := range []struct {
		name string
		args func(port int) []string
	}{
		{"go", func(int) []string { return []string{goReceiver} }},
		{"node", func(int) []string { return []string{node, filepath.Join(docs, "receiver.js")} }},
		{"python", func(int) []string { return []string{python, filepath.Join(docs, "receiver.py")} }},
		{"php", func(port int) []string {
			return []string{php, "-S", fmt.Sprintf("127.0.0.1:%d", port), filepath.Join(docs, "receiver.php")}
		}},
	} {
		port, err := devnet.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		args := c.args(port)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = docs
		cmd.Env = append(os.Environ(), "PAYWATCH_WEBHOOK_SECRET="+secret, "PORT="+strconv.Itoa(port),
			"PAYWATCH_WEBHOOK_SEEN_DIR="+t.TempDir())
		rs = append(rs, startReceiver(t, ctx, c.name, port, cmd))
	}
	var urls []string
	for _, r := range rs {
		urls = append(urls, r.url)
	}
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dev := startDevWith(t, ctx, devOptions{Dir: dir, Listen: fmt.Sprintf("127.0.0.1:%d", port), Webhooks: urls})
	env := dev.env
	if env[envWebhookSecret] != secret || env[envWebhookURLs] != strings.Join(urls, " ") {
		t.Fatalf("sandbox.env has %s=%q %s=%q", envWebhookSecret, env[envWebhookSecret], envWebhookURLs, env[envWebhookURLs])
	}

	// A real delivery: the creation of an intent.
	in := createIntent(t, ctx, env, payment.BTC, "5.00")
	var feed struct {
		Events []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		} `json:"events"`
	}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/events?type=intent.created&limit=1000", nil, &feed); err != nil {
		t.Fatal(err)
	}
	evID := ""
	for _, e := range feed.Events {
		if e.Data.ID == in.ID {
			evID = e.ID
		}
	}
	if evID == "" {
		t.Fatalf("no intent.created event for %s in %+v", in.ID, feed.Events)
	}
	for _, r := range rs {
		r.out.waitLine(t, ctx, r.name, "accepted "+evID+" intent.created")
	}

	// What a receiver must refuse or drop, signed as paywatch signs.
	for _, r := range rs {
		again := `{"id":"` + evID + `","type":"intent.created","data":{}}`
		if st := post(t, ctx, r.url, signed(secret, time.Now(), again), again); st != http.StatusOK {
			t.Errorf("%s answered a repeated event %d, want 200 (else paywatch retries it)", r.name, st)
		}
		r.out.waitLine(t, ctx, r.name, "duplicate "+evID)
		other := `{"id":"ev_test_` + r.name + `","type":"intent.paid","data":{}}`
		if st := post(t, ctx, r.url, signed(strings.Repeat("x", 64), time.Now(), other), other); st != http.StatusBadRequest {
			t.Errorf("%s answered a forged signature %d, want 400", r.name, st)
		}
		r.out.waitLine(t, ctx, r.name, "refused signature does not match")
		if st := post(t, ctx, r.url, signed(secret, time.Now().Add(-6*time.Minute), other), other); st != http.StatusBadRequest {
			t.Errorf("%s answered a 6 minute old signature %d, want 400", r.name, st)
		}
		r.out.waitLine(t, ctx, r.name, "refused timestamp outside the 5 minute window")
		// Refused deliveries were not recorded: the genuine one is handled.
		if st := post(t, ctx, r.url, signed(secret, time.Now(), other), other); st != http.StatusOK {
			t.Errorf("%s answered a genuine delivery %d", r.name, st)
		}
		r.out.waitLine(t, ctx, r.name, "accepted ev_test_"+r.name+" intent.paid")
	}
}
