package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// daemonStopWait bounds how long the daemon may take to stop after SIGTERM
// before it is killed.
const daemonStopWait = 30 * time.Second

// serve writes sandbox.env, runs the paywatch daemon (`paywatch serve` on
// the sandbox's config, the very binary an operator runs) until ctx ends,
// and calls ready once the API answers and the networks are available (or
// after a minute, naming those that are not). The daemon's log goes to
// logs/paywatch.log; its warnings and errors are also shown on the
// terminal, so a newcomer sees what goes wrong. A daemon that ends before
// ctx does is an error.
func (s *sandbox) serve(ctx context.Context, ready func(sandboxReady)) error {
	if err := s.env.write(filepath.Join(s.dir, "sandbox.env")); err != nil {
		return err
	}
	logPath := filepath.Join(s.dir, "logs", "paywatch.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	secret, err := s.checkoutSecret()
	if err != nil {
		return err
	}
	cmd := exec.Command(s.daemonBin, "serve", "--config", s.cfgPath)
	cmd.Env = append(withoutPaywatchEnv(os.Environ()), s.cfg.Checkout.SecretEnv+"="+secret)
	if len(s.webhooks) > 0 {
		cmd.Env = append(cmd.Env, webhookSecretEnv+"="+s.env[envWebhookSecret])
	}
	cmd.Stdout = logf
	// Should this process die without stopping it, the daemon stops too
	// (and stopStale ends it on the next start otherwise).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the paywatch daemon %s: %w", s.daemonBin, err)
	}
	exited := make(chan error, 1)
	go func() {
		copyDaemonLog(stderr, logf, s.terminal())
		exited <- cmd.Wait()
	}()
	rctx, cancelReady := context.WithCancel(ctx)
	readyDone := make(chan struct{})
	go func() {
		defer close(readyDone)
		s.announce(rctx, ready)
	}()
	defer func() { cancelReady(); <-readyDone }()
	select {
	case err := <-exited:
		if err == nil {
			err = errors.New("exited")
		}
		return fmt.Errorf("the paywatch daemon stopped: %w (see %s)", err, filepath.Join(s.relDir, "logs", "paywatch.log"))
	case <-ctx.Done():
	}
	cancelReady()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("the paywatch daemon did not stop cleanly: %w (see %s)", err, logPath)
		}
		return nil
	case <-time.After(daemonStopWait):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("the paywatch daemon did not stop in %s: killed", daemonStopWait)
	}
}

// announce waits until the API answers and every network is available (at
// most a minute), issues the console's one-time sign-in link and calls
// ready, unless ctx ended first.
func (s *sandbox) announce(ctx context.Context, ready func(sandboxReady)) {
	url := s.env[envURL]
	r := sandboxReady{URL: url, Unavailable: waitAvailable(ctx, url, s.env[envAPIKey], time.Minute)}
	if link, err := s.signInLink(ctx); err != nil {
		s.say("console sign-in link failed: %v", err)
	} else if link != "" {
		r.SignInLink = url + link
	}
	if ex, err := createExample(ctx, url, s.env[envAPIKey], r.Unavailable); err != nil {
		s.say("the example intent could not be created: %v", err)
	} else {
		r.Example = ex
	}
	if ctx.Err() == nil && ready != nil {
		ready(r)
	}
}

// signInLink returns a one-time console sign-in path for the sandbox's API
// key ("" when the console is off). The daemon exchanges it because the
// sandbox config turns console.signin_links on.
func (s *sandbox) signInLink(ctx context.Context) (string, error) {
	if !s.cfg.Console.Enabled || !s.cfg.Console.SignInLinks {
		return "", nil
	}
	st, err := store.Open(ctx, s.cfg.DatabaseURL)
	if err != nil {
		return "", err
	}
	defer st.Close()
	key, err := st.APIKeyByPlain(ctx, s.env[envAPIKey])
	if err != nil {
		return "", fmt.Errorf("sandbox API key: %w", err)
	}
	return console.NewSignInLink(ctx, st, key, time.Now().UTC(), signInLinkTTL)
}

// checkoutSecret returns the secret the daemon derives payment page
// tokens from, made once and kept in checkout.secret (mode 0600), so page
// links stay valid across restarts.
func (s *sandbox) checkoutSecret() (string, error) {
	path := filepath.Join(s.dir, "checkout.secret")
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

// example is the intent the banner offers to pay.
type example struct {
	ID, Reference, Method, Amount, PageURL string
}

// createExample creates the banner's example order: 25.00 USD in BTC, or
// in the first method whose network is available.
func createExample(ctx context.Context, url, key string, unavailable []string) (example, error) {
	down := strings.Join(unavailable, " ")
	for _, m := range payment.Methods {
		if strings.Contains(down, string(m.Network)) {
			continue
		}
		ref := fmt.Sprintf("ORD-EXAMPLE-%d", time.Now().Unix())
		var in struct {
			ID             string `json:"id"`
			Amount         string `json:"amount"`
			Asset          string `json:"asset"`
			PaymentPageURL string `json:"payment_page_url"`
		}
		err := apiCall(ctx, url, key, "POST", "/v1/intents", map[string]string{"kind": "order", "reference": ref,
			"amount_usd": "25.00", "method": string(m.Method)}, &in)
		if err != nil {
			return example{}, err
		}
		return example{ID: in.ID, Reference: ref, Method: string(m.Method), Amount: in.Amount + " " + in.Asset, PageURL: in.PaymentPageURL}, nil
	}
	return example{}, errors.New("no network is available")
}

// withoutPaywatchEnv drops PAYWATCH_* variables: the sandbox's config file
// is the daemon's whole truth.
func withoutPaywatchEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PAYWATCH_") {
			out = append(out, kv)
		}
	}
	return out
}

// copyDaemonLog copies the daemon's log lines (JSON) to log, and shows the
// warnings, errors and any line that is not a log record (the daemon's
// last words) on terminal as text.
func copyDaemonLog(r io.Reader, log, terminal io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		_, _ = log.Write(append(line, '\n'))
		if text, show := terminalLine(line); show {
			fmt.Fprintln(terminal, text)
		}
	}
	_, _ = io.Copy(log, r) // a line too long for the scanner
}

// terminalLine renders a JSON log record as key=value text, in its order,
// without the time; show is true for a warning or an error, and for a line
// that is not a log record.
func terminalLine(line []byte) (text string, show bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return string(line), len(bytes.TrimSpace(line)) > 0
	}
	var b strings.Builder
	level := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return string(line), true
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return string(line), true
		}
		val := string(raw)
		var str string
		if json.Unmarshal(raw, &str) == nil {
			val = str
			if val == "" || strings.ContainsAny(val, " \"=\t\n") {
				val = strconv.Quote(val)
			}
		}
		switch key {
		case "time":
			continue
		case "level":
			level = str
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(key + "=" + val)
	}
	return b.String(), strings.HasPrefix(level, "WARN") || strings.HasPrefix(level, "ERROR")
}

// importSolanaPool adds the sandbox's Solana pool keys (a repeat adds
// nothing) and wakes the daemons that hand them out.
func importSolanaPool(ctx context.Context, st *store.Store, keys []string) error {
	parsed, err := addresses.ParseSolanaPool(strings.NewReader(strings.Join(keys, "\n")))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	rows := make([]store.Address, len(parsed))
	for i, k := range parsed {
		rows[i] = store.Address{Network: string(payment.Solana), Key: k.Key, Address: k.String, Source: "pool", Index: -1,
			CreatedAt: now.Add(time.Duration(i) * time.Microsecond)}
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.AddAddresses(ctx, rows); err != nil {
			return err
		}
		return tx.NotifyAddresses(ctx, string(payment.Solana))
	})
}
