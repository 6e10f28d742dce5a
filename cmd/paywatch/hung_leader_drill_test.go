package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// hungDrillEnv names the config of a TestHungLeaderDrill instance.
const hungDrillEnv = "PAYWATCH_HUNG_DRILL_CONFIG"

// TestHungLeaderDrillInstance is not a test of its own: TestHungLeaderDrill
// runs this test binary again with hungDrillEnv set, and this runs
// `paywatch serve` in that process, a real process the drill stops and
// continues with signals. Without hungDrillEnv it does nothing.
func TestHungLeaderDrillInstance(t *testing.T) {
	path := os.Getenv(hungDrillEnv)
	if path == "" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, []string{"serve", "--config", path}, os.Stdout, os.Stderr); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// drillInstance is one paywatch process of the drill.
type drillInstance struct {
	name, base, log string
	cmd             *exec.Cmd
}

// TestHungLeaderDrill runs two paywatch processes over one database and
// one litecoind, and freezes the scanner's leader with SIGSTOP (a VM pause,
// a long GC: its sockets stay open, nothing closes) for as long as the
// standby needs to take over and detect a payment sent meanwhile. It checks
// that the standby takes the lease within 30 s of the freeze (measured from
// the lease's acquired_at, the database's clock), that the payment is paid
// while the leader is still frozen, and, after SIGCONT, that the woken
// instance steps down and writes nothing as leader (no write of its
// session to the cursors, blocks or transfers after the takeover), that
// every payment is one transfer and its intent paid, and that /v1/status on
// both names the new leader (issue 32 item 6).
func TestHungLeaderDrill(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ltc, err := devnet.StartLitecoind(ctx, t.TempDir(), 0, false)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "litecoind", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ltc.Stop()
	dbURL := devnettest.Database(t)
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	key, _, err := st.CreateAPIKey(ctx, "drill", []string{"storefront", "operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Every change to what only a leader writes is recorded with the
	// writing session's application_name (each instance's own).
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE drill_writes (app TEXT NOT NULL, tbl TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp());
		CREATE FUNCTION drill_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			INSERT INTO drill_writes (app, tbl) VALUES (current_setting('application_name'), TG_TABLE_NAME); RETURN NULL; END $$;
		CREATE TRIGGER drill_cursors AFTER INSERT OR UPDATE OR DELETE ON cursors FOR EACH ROW EXECUTE FUNCTION drill_write();
		CREATE TRIGGER drill_blocks AFTER INSERT OR UPDATE OR DELETE ON blocks FOR EACH ROW EXECUTE FUNCTION drill_write();
		CREATE TRIGGER drill_transfers AFTER INSERT OR UPDATE OR DELETE ON transfers FOR EACH ROW EXECUTE FUNCTION drill_write();`); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	start := func(name string) *drillInstance {
		port, err := devnet.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		sep := "?"
		if strings.Contains(dbURL, "?") {
			sep = "&"
		}
		cfgPath := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
listen: 127.0.0.1:%d
database_url: %q
instance: %s
log_level: info
rates: {sources: [static], min_sources: 1, static: {LTC: "10000"}, refresh: "@every 1s"}
methods:
  LTC: {enabled: true, confirmations: 1}
networks:
  litecoin: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 200ms, max_lag_blocks: 50}
`, port, dbURL+sep+"application_name="+name, name, ltc.RPCURL, addresses.SandboxKeys[payment.Litecoin])), 0o600); err != nil {
			t.Fatal(err)
		}
		in := &drillInstance{name: name, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, name+".log")}
		logFile, err := os.Create(in.log)
		if err != nil {
			t.Fatal(err)
		}
		in.cmd = exec.Command(os.Args[0], "-test.run=^TestHungLeaderDrillInstance$")
		in.cmd.Env = append(os.Environ(), hungDrillEnv+"="+cfgPath)
		in.cmd.Stdout, in.cmd.Stderr = logFile, logFile
		if err := in.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		logFile.Close()
		t.Cleanup(func() {
			_ = in.cmd.Process.Signal(syscall.SIGCONT)
			_ = in.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = in.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = in.cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				raw, _ := os.ReadFile(in.log)
				t.Logf("%s log (tail):\n%s", name, lastLines(string(raw), 40))
			}
		})
		return in
	}
	client := &http.Client{Timeout: 10 * time.Second}
	call := func(in *drillInstance, method, path string, body any) (int, map[string]any) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, in.base+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if method == "POST" {
			req.Header.Set("Idempotency-Key", fmt.Sprintf("drill-%d", time.Now().UnixNano()))
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	// Generous outer bounds (the machine is loaded); the 30 s bound is
	// asserted on measured times.
	waitFor := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("after %v: %s", within, what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	statusLeader := func(in *drillInstance) string {
		code, v := call(in, "GET", "/v1/status", nil)
		if code != 200 {
			return ""
		}
		nets, _ := v["networks"].([]any)
		for _, n := range nets {
			if m, _ := n.(map[string]any); m["network"] == "litecoin" {
				s, _ := m["leader"].(string)
				return s
			}
		}
		return ""
	}
	type lease struct {
		holder   string
		live     bool
		token    int64
		acquired time.Time
	}
	leaseNow := func() lease {
		var l lease
		err := conn.QueryRow(ctx, `SELECT holder, expires_at > clock_timestamp(), token, acquired_at FROM leases WHERE name = 'scanner.litecoin'`).
			Scan(&l.holder, &l.live, &l.token, &l.acquired)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		return l
	}
	// pay creates an order on in, pays it on litecoind and mines its block.
	pay := func(in *drillInstance, ref string) (id, txid string) {
		var v map[string]any
		waitFor("an order created on "+in.name, 2*time.Minute, func() bool {
			var code int
			code, v = call(in, "POST", "/v1/intents", map[string]string{"kind": "order", "reference": ref, "amount_usd": "1.00", "method": "LTC"})
			return code == 201
		})
		amount, err := strconv.ParseInt(v["amount_base_units"].(string), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if txid, err = ltc.SendToAddress(ctx, v["address"].(string), amount); err != nil {
			t.Fatal(err)
		}
		if _, err := ltc.Generate(ctx, 1); err != nil {
			t.Fatal(err)
		}
		return v["id"].(string), txid
	}
	paid := func(in *drillInstance, id string) func() bool {
		return func() bool {
			code, v := call(in, "GET", "/v1/intents/"+id, nil)
			return code == 200 && v["status"] == "paid"
		}
	}
	leaderGauge := func(in *drillInstance) string {
		resp, err := client.Get(in.base + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, `paywatch_scanner_leader{network="litecoin"}`) {
				return strings.TrimSpace(strings.TrimPrefix(line, `paywatch_scanner_leader{network="litecoin"}`))
			}
		}
		return ""
	}

	a := start("hung-a")
	waitFor("hung-a leads and says so", 2*time.Minute, func() bool {
		l := leaseNow()
		return l.holder == "hung-a" && l.live && statusLeader(a) == "hung-a"
	})
	b := start("hung-b")
	waitFor("hung-b serves", 2*time.Minute, func() bool { return statusLeader(b) == "hung-a" })
	id1, tx1 := pay(a, "HUNG-1")
	waitFor("the first payment is paid", 2*time.Minute, paid(a, id1))
	if l := leaseNow(); l.holder != "hung-a" {
		t.Fatalf("the standby took the lease of a live leader: %+v", l)
	}
	before := leaseNow()

	// The leader freezes.
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	id2, tx2 := pay(b, "HUNG-2")
	var taken lease
	waitFor("hung-b takes the lease while hung-a is frozen", 3*time.Minute, func() bool {
		taken = leaseNow()
		return taken.holder == "hung-b" && taken.token > before.token
	})
	takeover := taken.acquired.Sub(stopped)
	waitFor("the payment sent while the leader is frozen is paid", 3*time.Minute, paid(b, id2))
	detected := time.Since(stopped)
	waitFor("/v1/status on hung-b names hung-b", time.Minute, func() bool { return statusLeader(b) == "hung-b" })
	if takeover > 30*time.Second {
		t.Errorf("the standby took over %v after the leader froze, more than 30 s", takeover.Round(time.Millisecond))
	}

	// The leader wakes.
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	woke := time.Now()
	waitFor("the woken hung-a steps down", 2*time.Minute, func() bool { return leaderGauge(a) == "0" })
	id3, tx3 := pay(b, "HUNG-3")
	waitFor("a payment after the wake is paid", 2*time.Minute, paid(b, id3))
	if _, err := ltc.Generate(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var nodeHeight int64
	waitFor("hung-b scans to the tip", 2*time.Minute, func() bool {
		var cur int64
		if err := conn.QueryRow(ctx, `SELECT height, node_height FROM cursors WHERE network = 'litecoin'`).Scan(&cur, &nodeHeight); err != nil {
			t.Fatal(err)
		}
		return cur >= nodeHeight && nodeHeight > 0
	})
	for _, in := range []*drillInstance{a, b} {
		if got := statusLeader(in); got != "hung-b" {
			t.Errorf("/v1/status on %s names %q, want hung-b", in.name, got)
		}
	}
	if l := leaseNow(); l.holder != "hung-b" || !l.live || l.token != taken.token {
		t.Errorf("the lease after the wake: %+v, want hung-b's token %d", l, taken.token)
	}
	// Nothing the woken instance did after the takeover reached what only
	// a leader writes.
	var late int
	var what string
	if err := conn.QueryRow(ctx, `SELECT count(*), COALESCE(string_agg(DISTINCT tbl, ','), '') FROM drill_writes WHERE app = 'hung-a' AND at >= $1`,
		taken.acquired).Scan(&late, &what); err != nil {
		t.Fatal(err)
	}
	if late > 0 {
		t.Errorf("the ex-leader wrote %d rows (%s) as leader after the takeover", late, what)
	}
	// Nothing lost, nothing doubled.
	for _, p := range []struct{ id, txid string }{{id1, tx1}, {id2, tx2}, {id3, tx3}} {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM transfers WHERE network = 'litecoin' AND txid = $1`, p.txid).Scan(&n); err != nil || n != 1 {
			t.Errorf("payment %s of %s: %d transfers (%v), want 1", p.txid, p.id, n, err)
		}
		if !paid(b, p.id)() {
			t.Errorf("intent %s is not paid", p.id)
		}
	}
	t.Logf("hung leader: takeover %v after SIGSTOP (lease acquired_at), the payment sent meanwhile paid %v after it; woken %v after it",
		takeover.Round(time.Millisecond), detected.Round(time.Millisecond), woke.Sub(stopped).Round(time.Millisecond))
}
