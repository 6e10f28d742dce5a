package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
)

// checkAPIAnswers checks every answer the sandbox's API client (apiCall)
// gets during t against the OpenAPI document, until t ends.
func checkAPIAnswers(t *testing.T) {
	prev := apiHTTP.Transport
	apiHTTP.Transport = openapitest.Transport(t, prev)
	t.Cleanup(func() { apiHTTP.Transport = prev })
}

// needSandboxPeers fails (under CI) or skips when a node the sandbox runs
// is not installed; the test never installs anything itself.
func needSandboxPeers(t *testing.T) {
	t.Helper()
	_, err := devnet.PostgresBinDir()
	devnettest.Need(t, "PostgreSQL", err)
	_, err = exec.LookPath("btcd")
	if err != nil {
		if out, gerr := exec.Command("go", "env", "GOPATH").Output(); gerr == nil {
			if _, serr := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "bin", "btcd")); serr == nil {
				err = nil
			}
		}
	}
	devnettest.Need(t, "btcd", err)
	_, err = os.Stat(devnet.LitecoindPath)
	devnettest.Need(t, "litecoind", err)
	_, err = ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// paywatchBinary builds the daemon the sandbox runs (once per test binary,
// into a directory removed by TestMain).
func paywatchBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "paywatch-sandbox-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		builtBin = filepath.Join(dir, "paywatch")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/paywatch/paywatch/cmd/paywatch").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/paywatch: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// binDir holds the daemon built for the tests.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// sandboxDir returns a fresh directory the postgres user can enter (as root,
// PostgreSQL runs as postgres, and t.TempDir is private to root).
func sandboxDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "paywatch-devtest-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// logWriter sends progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// runningDev is a sandbox started as `paywatch-sandbox` starts it, serving in
// a goroutine.
type runningDev struct {
	sb     *sandbox
	cancel context.CancelFunc
	errc   chan error
	env    sandboxEnv
	took   time.Duration
	ready  sandboxReady
}

// startDev starts the sandbox on dir and waits until every network accepts
// intents.
func startDev(t *testing.T, ctx context.Context, dir, listen string) *runningDev {
	t.Helper()
	return startDevWith(t, ctx, devOptions{Dir: dir, Listen: listen})
}

// startDevWith is startDev with more options (o.Out and o.Daemon are set
// here).
func startDevWith(t *testing.T, ctx context.Context, o devOptions) *runningDev {
	t.Helper()
	start := time.Now()
	o.Out, o.Daemon = logWriter{t}, paywatchBinary(t)
	sb, err := startSandbox(ctx, o)
	if err != nil {
		t.Fatalf("start the sandbox: %v", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	rd := &runningDev{sb: sb, cancel: cancel, errc: make(chan error, 1)}
	t.Cleanup(rd.stop)
	readyc := make(chan sandboxReady, 1)
	go func() { rd.errc <- sb.serve(sctx, func(r sandboxReady) { readyc <- r }) }()
	select {
	case r := <-readyc:
		if len(r.Unavailable) > 0 {
			t.Fatalf("networks not available after a minute: %v", r.Unavailable)
		}
		rd.ready = r
	case err := <-rd.errc:
		rd.errc <- err
		t.Fatalf("the daemon ended before it was ready: %v", err)
	case <-ctx.Done():
		t.Fatalf("the sandbox did not become ready: %v", ctx.Err())
	}
	rd.took = time.Since(start)
	env, err := readSandboxEnv(filepath.Join(o.Dir, "sandbox.env"))
	if err != nil {
		t.Fatal(err)
	}
	rd.env = env
	return rd
}

// stop ends the daemon, then the nodes, as Ctrl-C does. It is idempotent.
func (rd *runningDev) stop() {
	if rd.cancel == nil {
		return
	}
	rd.cancel()
	rd.cancel = nil
	<-rd.errc
	rd.sb.stop()
}

// intentState is the part of an intent the test checks.
type intentState struct {
	ID                string `json:"id"`
	Method            string `json:"method"`
	Status            string `json:"status"`
	Address           string `json:"address"`
	AmountBaseUnits   string `json:"amount_base_units"`
	ReceivedBaseUnits string `json:"received_base_units"`
	Transfers         []struct {
		TxID           string `json:"txid"`
		Status         string `json:"status"`
		Classification string `json:"classification"`
	} `json:"transfers"`
}

func getIntent(ctx context.Context, env sandboxEnv, id string) (intentState, error) {
	var in intentState
	err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/intents/"+id, nil, &in)
	return in, err
}

// waitPaid waits until intent id is paid, failing on a status that can no
// longer become paid.
func waitPaid(t *testing.T, ctx context.Context, env sandboxEnv, id string, timeout time.Duration) intentState {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last intentState
	for {
		in, err := getIntent(ctx, env, id)
		if err == nil {
			last = in
			switch in.Status {
			case "paid":
				return in
			case "expired", "underpaid", "reverted", "superseded":
				t.Fatalf("%s (%s): status %s, want paid", id, in.Method, in.Status)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s (%s) not paid in %s: last status %q, transfers %+v (err %v)", id, last.Method, timeout, last.Status, last.Transfers, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// getPage fetches a payment page, failing unless it is 200.
func getPage(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// createIntent creates an order intent over HTTP with the sandbox key.
func createIntent(t *testing.T, ctx context.Context, env sandboxEnv, method payment.Method, usd string) intentState {
	t.Helper()
	var in intentState
	body := map[string]string{"kind": "order", "reference": fmt.Sprintf("DEVTEST-%s-%d", method, time.Now().UnixNano()),
		"amount_usd": usd, "method": string(method)}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodPost, "/v1/intents", body, &in); err != nil {
		t.Fatalf("create a %s intent: %v", method, err)
	}
	if in.Status != "awaiting_payment" || in.Address == "" || in.AmountBaseUnits == "" || in.AmountBaseUnits == "0" {
		t.Fatalf("new %s intent: %+v", method, in)
	}
	return in
}

// The sandbox end to end on real btcd, litecoind and anvil plus the
// simulated Tron and Solana nodes: an intent per method is created over
// HTTP, paid with the code of `paywatch-sandbox pay`, and becomes paid; a restart on the
// same directory keeps the key, the tokens and every paid intent (btcd and
// the simulated nodes start new chains, which the sandbox detects), and new
// payments still work.
func TestSandboxEndToEnd(t *testing.T) {
	needSandboxPeers(t)
	checkAPIAnswers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := sandboxDir(t)
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", port)

	dev := startDev(t, ctx, dir, listen)
	t.Logf("cold start (tokens deployed, key created): %s", dev.took)
	env := dev.env
	if env[envURL] != "http://"+listen {
		t.Fatalf("PAYWATCH_URL=%s, want http://%s", env[envURL], listen)
	}
	for _, k := range []string{envBitcoin, envLitecoin} {
		if !strings.HasPrefix(env[k], "http://u:p@127.0.0.1:") {
			t.Fatalf("%s=%s: want credentials in the URL", k, env[k])
		}
	}
	if env[envUSDT] == env[envUSDC] {
		t.Fatalf("USDT and USDC share the contract %s", env[envUSDT])
	}
	// A second sandbox on the same directory refuses to start, and leaves
	// the running one alone.
	if sb, err := startSandbox(ctx, devOptions{Dir: dir, Listen: listen}); err == nil || !strings.Contains(err.Error(), "already running") {
		if sb != nil {
			sb.stop()
		}
		t.Fatalf("second sandbox on %s: %v, want already running", dir, err)
	}
	// The banner's example order: its payment page, paid while it is open.
	ex := dev.ready.Example
	if ex.ID == "" || ex.Method != "BTC" || !strings.HasPrefix(ex.PageURL, env[envURL]+"/pay/") {
		t.Fatalf("example intent %+v", ex)
	}
	if page := getPage(t, ctx, ex.PageURL); !strings.Contains(page, "Waiting for your payment") || !strings.Contains(page, ex.Reference) {
		t.Fatalf("example page:\n%s", page)
	}
	if _, err := payIntent(ctx, env, dir, ex.ID, "", nil); err != nil {
		t.Fatalf("pay the example: %v", err)
	}
	waitPaid(t, ctx, env, ex.ID, 2*time.Minute)
	if page := getPage(t, ctx, ex.PageURL); !strings.Contains(page, "Paid. Thank you!") {
		t.Fatalf("the example page once paid:\n%s", page)
	}
	// A wrong key is 401.
	if err := apiCall(ctx, env[envURL], "pw_wrong", http.MethodGet, "/v1/status", nil, nil); !isStatus(err, 401) {
		t.Fatalf("wrong key: %v, want 401", err)
	}

	paid := map[payment.Method]intentState{}
	for _, m := range payment.Methods {
		in := createIntent(t, ctx, env, m.Method, "12.34")
		res, err := payIntent(ctx, env, dir, in.ID, "", nil)
		if err != nil {
			t.Fatalf("pay the %s intent %s: %v", m.Method, in.ID, err)
		}
		if res.TxID == "" {
			t.Fatalf("pay %s: no txid", m.Method)
		}
		t.Logf("%-10s %s paid by %s (seen as %q before mining %d blocks)", m.Method, in.ID, res.TxID, res.Seen, res.Mined)
		paid[m.Method] = in
	}
	for m, in := range paid {
		got := waitPaid(t, ctx, env, in.ID, 2*time.Minute)
		if got.ReceivedBaseUnits != in.AmountBaseUnits {
			t.Errorf("%s: received %s, want exactly %s", m, got.ReceivedBaseUnits, in.AmountBaseUnits)
		}
		if len(got.Transfers) != 1 || got.Transfers[0].Classification != "settles" || got.Transfers[0].Status != "confirmed" {
			t.Errorf("%s: transfers %+v, want one confirmed settling transfer", m, got.Transfers)
		}
		paid[m] = got
	}
	// The daemon's reconciler (issue 27), asked for a run of every network,
	// checks them against the sandbox's nodes and finds nothing missing.
	reconcileAll(t, ctx, env)
	// Payments in flight across the restart, on the chains that persist:
	// seen (mined once on anvil, in litecoind's mempool) but not confirmed.
	inflight := map[payment.Method]intentState{}
	for _, m := range []payment.Method{payment.ETH, payment.LTC} {
		in := createIntent(t, ctx, env, m, "4.56")
		units, _ := new(big.Int).SetString(in.AmountBaseUnits, 10)
		var txid string
		if m == payment.ETH {
			txid, err = payEthereum(ctx, env, payment.MustMethod(m), in.Address, units)
		} else {
			txid, err = payLitecoin(ctx, env, in.Address, units)
		}
		if err != nil {
			t.Fatalf("pay %s: %v", m, err)
		}
		if seen := waitSeen(ctx, env, in.ID, time.Minute); seen != "detected" {
			t.Fatalf("%s payment %s: status %q, want detected", m, txid, seen)
		}
		inflight[m] = in
	}
	key, usdt := env[envAPIKey], env[envUSDT]
	dev.stop()

	// Second run on the same directory: data reused.
	dev = startDev(t, ctx, dir, listen)
	// Page links survive the restart (the secret is kept).
	if page := getPage(t, ctx, ex.PageURL); !strings.Contains(page, "Paid. Thank you!") {
		t.Fatalf("the example page after the restart:\n%s", page)
	}
	t.Logf("warm start: %s", dev.took)
	env = dev.env
	if env[envAPIKey] != key || env[envUSDT] != usdt {
		t.Fatalf("restart changed the key or the token: %s %s, want %s %s", env[envAPIKey], env[envUSDT], key, usdt)
	}
	for m, before := range paid {
		got, err := getIntent(ctx, env, before.ID)
		if err != nil {
			t.Fatalf("%s intent %s after the restart: %v", m, before.ID, err)
		}
		if got.Status != "paid" || len(got.Transfers) != 1 || got.Transfers[0].TxID != before.Transfers[0].TxID {
			t.Errorf("%s after the restart: %+v, want paid by %s", m, got, before.Transfers[0].TxID)
		}
	}
	for m, in := range inflight {
		info := payment.MustMethod(m)
		if err := mineBlocks(ctx, env, dir, info.Network, info.DefaultConfirmations); err != nil {
			t.Fatalf("mine %s: %v", info.Network, err)
		}
		waitPaid(t, ctx, env, in.ID, 2*time.Minute)
	}
	// btcd and the simulated nodes started new chains: their scanners must
	// follow them, and a new payment on each must be seen.
	for _, m := range []payment.Method{payment.BTC, payment.TRX, payment.SOL, payment.USDTERC20} {
		in := createIntent(t, ctx, env, m, "3.21")
		if _, err := payIntent(ctx, env, dir, in.ID, "", nil); err != nil {
			t.Fatalf("pay %s after the restart: %v", m, err)
		}
		waitPaid(t, ctx, env, in.ID, 2*time.Minute)
	}
	// The new chains grew past the heights of the first run's payments
	// (mined blocks, blocks produced meanwhile): nothing of the first run
	// was orphaned or reverted.
	for m, before := range paid {
		got, err := getIntent(ctx, env, before.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "paid" || got.Transfers[0].Status != "confirmed" {
			t.Errorf("%s at the end: status %s, transfers %+v, want paid and confirmed", m, got.Status, got.Transfers)
		}
	}
}

func isStatus(err error, status int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == status
}

// The sandbox's Solana pool recipe reproduces addresses.SandboxSolanaPool
// and extends it with distinct valid keys.
func TestSandboxSolanaPool(t *testing.T) {
	keys := sandboxSolanaPool(sandboxSolanaPoolSize)
	for i, k := range addresses.SandboxSolanaPool {
		if keys[i] != k {
			t.Fatalf("key %d: %s, want %s", i, keys[i], k)
		}
	}
	parsed, err := addresses.ParseSolanaPool(strings.NewReader(strings.Join(keys, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed) != sandboxSolanaPoolSize {
		t.Fatalf("%d distinct keys, want %d", len(parsed), sandboxSolanaPoolSize)
	}
}

// sandbox.env round-trips, and a file missing a line is refused with the
// line's name.
func TestSandboxEnvFile(t *testing.T) {
	dir := t.TempDir()
	env := sandboxEnv{}
	for i, k := range envOrder {
		env[k] = fmt.Sprintf("v%d=x", i)
	}
	path := filepath.Join(dir, "sandbox.env")
	if err := env.write(path); err != nil {
		t.Fatal(err)
	}
	got, err := readSandboxEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		if got[k] != v {
			t.Fatalf("%s=%q, want %q", k, got[k], v)
		}
	}
	delete(env, envSolana)
	if err := env.write(path); err != nil {
		t.Fatal(err)
	}
	if _, err := readSandboxEnv(path); err == nil || !strings.Contains(err.Error(), envSolana) {
		t.Fatalf("missing %s: %v", envSolana, err)
	}
	if _, err := readSandboxEnv(filepath.Join(dir, "nope.env")); err == nil || !strings.Contains(err.Error(), "make run") {
		t.Fatalf("missing file: %v", err)
	}
}

// reconcileAll asks the daemon for a reconcile run of every network and
// waits for them: each must finish with no live finding.
func reconcileAll(t *testing.T, ctx context.Context, env sandboxEnv) {
	t.Helper()
	nets := []string{"bitcoin", "litecoin", "ethereum", "tron", "solana"}
	for _, n := range nets {
		if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodPost, "/v1/networks/"+n+"/reconcile", nil, nil); err != nil {
			t.Fatalf("reconcile %s: %v", n, err)
		}
	}
	type status struct {
		Reconcile struct {
			Runs []struct {
				Network        string  `json:"network"`
				Runs           int64   `json:"runs"`
				LastFinishedAt *string `json:"last_finished_at"`
				RequestedAt    *string `json:"requested_at"`
				LastError      string  `json:"last_error"`
			} `json:"runs"`
			LiveFindings int64             `json:"live_findings"`
			Findings     []json.RawMessage `json:"findings"`
		} `json:"reconcile"`
	}
	for {
		var st status
		if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/status", nil, &st); err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, r := range st.Reconcile.Runs {
			if r.Runs > 0 && r.LastFinishedAt != nil && r.RequestedAt == nil {
				done++
			}
		}
		if done == len(nets) {
			if st.Reconcile.LiveFindings != 0 {
				t.Fatalf("reconcile findings in the sandbox: %+v", st.Reconcile)
			}
			t.Logf("reconciler: %+v", st.Reconcile.Runs)
			return
		}
		// Bounded by the test's context, not by the machine's speed.
		select {
		case <-ctx.Done():
			t.Fatalf("reconcile runs not done: %+v (%v)", st.Reconcile, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
