package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/webhooks"
)

// drillLoad is how long TestFailoverDrill's load runs before, between and
// after its failovers: a few seconds in `make test`, a minute in `make
// drill-pg`.
var drillLoad = flag.Duration("drill.load", 2*time.Second, "TestFailoverDrill: load phase length")

// drillSettings make a primary whose commits wait for its synchronous
// standby, and standbys that can become such a primary.
var drillSettings = []string{"wal_level=replica", "max_wal_senders=10", "hot_standby=on", "synchronous_commit=on",
	"wal_keep_size=256MB", "max_connections=200"}

// TestFailoverDrill runs the daemon on a primary with a synchronous
// standby (made with pg_basebackup -R), under a load of intent
// creations, litecoind payments, debits and webhook deliveries, and makes
// the primary vanish twice: first killed (SIGKILL of the postmaster and
// its backends), then silently (SIGSTOP: open connections neither answer
// nor close); each time the standby is promoted with pg_ctl promote and
// the load goes on. Then it checks what the clients were told against
// the last primary: every intent answered 201 exists, every debit
// answered 2xx is in the ledger once, every payment is recorded once and
// its intent paid, every event was delivered and none was signed with two
// bodies, and the balance is the sum of its entries. It logs the time
// from each loss to the first successful write.
func TestFailoverDrill(t *testing.T) {
	if _, err := devnet.PostgresBinDir(); err != nil {
		devnettest.Need(t, "PostgreSQL", err)
	}
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

	// The clusters live where the postgres user (when running as root)
	// can reach them.
	dir, err := os.MkdirTemp("", "paywatch-drill-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := devnet.StartPostgresWith(ctx, filepath.Join(dir, "a"), 0, drillSettings...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Signal(syscall.SIGKILL)
	if err := a.CreateDatabase(ctx, "paywatch"); err != nil {
		t.Fatal(err)
	}
	b, err := a.Standby(ctx, filepath.Join(dir, "b"), "b", 0, drillSettings...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Signal(syscall.SIGKILL)
	syncStandby(t, a, "b")
	portC, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dbURL := a.URLOf("paywatch", a.Port, b.Port, portC) + "&target_session_attrs=read-write"

	var hooks hookLog
	hookSrv := httptest.NewServer(&hooks)
	defer hookSrv.Close()
	t.Setenv("PAYWATCH_DRILL_HOOK_SECRET", hookSecret)
	cfgPath := filepath.Join(dir, "paywatch.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
listen: 127.0.0.1:0
database_url: %q
database: {connect_timeout: 1s, probe_interval: 250ms, probe_timeout: 1s, retry_for: 20s}
limits: {creates_per_minute: 0}   # the drill's load is one key creating as fast as it can
instance: drill
log_level: info
rates: {sources: [static], min_sources: 1, static: {LTC: "10000"}, refresh: "@every 1s"}
methods:
  LTC: {enabled: true, confirmations: 1}
networks:
  litecoin: {enabled: true, chain: regtest, rpc_url: %q, account_key: %q, poll_interval: 200ms, max_lag_blocks: 50}
webhooks:
  - {name: drill, url: %q, secret_env: PAYWATCH_DRILL_HOOK_SECRET}
`, dbURL, ltc.RPCURL, addresses.SandboxKeys[payment.Litecoin], hookSrv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(t.TempDir(), "paywatch.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			logFile.Seek(0, io.SeekStart)
			raw, _ := io.ReadAll(logFile)
			t.Logf("daemon log (tail):\n%s", lastLines(string(raw), 60))
		}
		logFile.Close()
	}()
	d, err := newDaemon(ctx, cfg, newLogger(logFile, "info"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	plain, _, err := d.Store().CreateAPIKey(ctx, "drill", []string{"storefront", "finance", "operator"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dctx, stopDaemon := context.WithCancel(ctx)
	defer stopDaemon()
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(dctx, func(a string) { addrCh <- a }) }()
	cl := &drillClient{t: t, base: "http://" + <-addrCh, key: plain,
		http: &http.Client{Transport: openapitest.Transport(t, nil), Timeout: 60 * time.Second}}

	// Mining: one block a second, from a goroutine of its own.
	mineStop := make(chan struct{})
	var mining sync.WaitGroup
	mining.Add(1)
	go func() {
		defer mining.Done()
		for {
			select {
			case <-mineStop:
				return
			case <-time.After(time.Second):
			}
			if _, err := ltc.Generate(ctx, 1); err != nil {
				t.Errorf("mine: %v", err)
				return
			}
		}
	}()
	defer func() {
		select {
		case <-mineStop:
		default:
			close(mineStop)
		}
		mining.Wait()
	}()

	// A balance to debit from: a top-up paid on litecoind (1 LTC at the
	// drill's rate), enough for a million debits of a cent.
	const account = "acct-drill"
	st, topup := cl.write("POST", "/v1/intents", "topup-1", map[string]string{"kind": "topup", "reference": "TOPUP-1", "account": account, "amount_usd": "10000.00", "method": "LTC"})
	if st != 201 {
		t.Fatalf("top-up: %d %v", st, topup)
	}
	var pays payLog
	pays.pay(t, ctx, ltc, topup)
	cl.waitFor("the top-up to be credited", 60*time.Second, func() bool {
		_, v := cl.read("GET", "/v1/accounts/"+account+"/balance")
		return v["available_usd"] == "10000.00"
	})

	// The load: two creators, one debitor, one payer (every third intent).
	var (
		stop     = make(chan struct{})
		workers  sync.WaitGroup
		mu       sync.Mutex
		intents  []string
		debits   []string
		toPay    = make(chan map[string]any, 100)
		nCreated atomic.Int64
	)
	for w := range 2 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ref := fmt.Sprintf("ORD-%d-%d", w, i)
				st, v := cl.write("POST", "/v1/intents", "c-"+ref, map[string]string{"kind": "order", "reference": ref, "amount_usd": "1.00", "method": "LTC"})
				if st == 201 {
					mu.Lock()
					intents = append(intents, v["id"].(string))
					mu.Unlock()
					if nCreated.Add(1)%3 == 0 {
						// Paid when the payer keeps up (litecoind's wallet
						// slows as it grows): a creator never waits for it.
						select {
						case toPay <- v:
						default:
						}
					}
				}
			}
		}()
	}
	workers.Add(1)
	go func() {
		defer workers.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ref := fmt.Sprintf("DEB-%d", i)
			st, _ := cl.write("POST", "/v1/accounts/"+account+"/debits", "d-"+ref, map[string]string{"reference": ref, "amount_usd": "0.01"})
			if st == 200 || st == 201 {
				mu.Lock()
				debits = append(debits, ref)
				mu.Unlock()
			}
		}
	}()
	var paying sync.WaitGroup
	paying.Add(1)
	go func() {
		defer paying.Done()
		for {
			select {
			case <-stop:
				return
			case v := <-toPay:
				pays.pay(t, ctx, ltc, v)
			}
		}
	}()

	time.Sleep(*drillLoad)
	// 1. The primary dies: SIGKILL of the postmaster and its backends.
	// Times are taken once every process is dead (or stopped): a write
	// that reached the primary before cannot commit after that.
	if err := a.Kill9(); err != nil {
		t.Fatal(err)
	}
	lost1 := time.Now()
	if err := b.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted1 := time.Now()
	time.Sleep(*drillLoad)
	// The load goes on until a write succeeded on the new primary (on a
	// loaded machine that may take longer than a phase); the bound below
	// says how long is too long.
	cl.waitFor("a successful write after the kill", time.Minute, func() bool { return !cl.firstWriteAfter(lost1).IsZero() })
	// A new synchronous standby for the new primary.
	c, err := b.Standby(ctx, filepath.Join(dir, "c"), "c", portC, drillSettings...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Signal(syscall.SIGKILL)
	adminExec(t, b, `ALTER SYSTEM SET synchronous_standby_names = 'c'`, `SELECT pg_reload_conf()`)
	syncStandby(t, b, "c")
	time.Sleep(*drillLoad)
	// 2. The primary vanishes silently: SIGSTOP, its sockets stay open.
	if err := b.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	lost2 := time.Now()
	if err := c.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted2 := time.Now()
	time.Sleep(*drillLoad)
	cl.waitFor("a successful write after the stop", time.Minute, func() bool { return !cl.firstWriteAfter(lost2).IsZero() })
	close(stop)
	workers.Wait()
	paying.Wait()
	// The old primary is fenced for good before anything is checked (an
	// operator's STONITH): a stopped primary that comes back would accept
	// writes nobody reads.
	_ = b.Signal(syscall.SIGKILL)

	// Every payment is recorded once and its intent decided.
	conn, err := pgx.Connect(ctx, c.URL("paywatch"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	paid := pays.all()
	cl.waitFor("every paid intent to be paid", max(90*time.Second, 5**drillLoad), func() bool {
		var n int
		ids := make([]string, 0, len(paid))
		for _, p := range paid {
			ids = append(ids, p.intent)
		}
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM intents WHERE id = ANY($1) AND status = 'paid'`, ids).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == len(paid)
	})
	// The scanner's lease was taken again on the last primary.
	if st, v := cl.read("GET", "/v1/status"); st != 200 || !strings.Contains(fmt.Sprint(v), "leader:drill") {
		t.Errorf("status after the failovers: %d %v", st, v)
	}
	for _, p := range paid {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM transfers WHERE network = 'litecoin' AND txid = $1`, p.txid).Scan(&n); err != nil || n != 1 {
			t.Errorf("payment %s of %s: %d transfers (%v), want 1", p.txid, p.intent, n, err)
		}
	}
	// Every intent answered 201 exists.
	var found int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM intents WHERE id = ANY($1)`, intents).Scan(&found); err != nil || found != len(intents) {
		t.Errorf("%d of the %d intents answered 201 exist (%v)", found, len(intents), err)
	}
	// Every debit answered 2xx is in the ledger once.
	for _, ref := range debits {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE account = $1 AND type = 'debit' AND reference = $2`, account, ref).Scan(&n); err != nil || n != 1 {
			t.Errorf("debit %s: %d ledger entries (%v), want 1", ref, n, err)
		}
	}
	// The balance is the sum of its entries.
	var balance, sum, reversals int64
	if err := conn.QueryRow(ctx, `SELECT a.balance_cents,
		    COALESCE(sum(CASE e.type WHEN 'credit' THEN e.amount_cents WHEN 'debit' THEN -e.amount_cents END), 0),
		    count(*) FILTER (WHERE e.type = 'reversal')
		FROM accounts a LEFT JOIN ledger_entries e ON e.account = a.account WHERE a.account = $1 GROUP BY a.balance_cents`, account).
		Scan(&balance, &sum, &reversals); err != nil {
		t.Fatal(err)
	}
	if balance != sum || reversals != 0 {
		t.Errorf("balance %d cents, sum of entries %d, reversals %d", balance, sum, reversals)
	}
	// Every event is delivered, none signed with two bodies.
	var maxSeq int64
	if err := conn.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM events`).Scan(&maxSeq); err != nil {
		t.Fatal(err)
	}
	cl.waitFor("every event to be delivered", max(90*time.Second, 5**drillLoad), func() bool {
		var last int64
		_ = conn.QueryRow(ctx, `SELECT last_seq FROM webhook_endpoints WHERE name = 'drill'`).Scan(&last)
		return last >= maxSeq
	})
	rows, err := conn.Query(ctx, `SELECT id FROM events WHERE seq <= $1 ORDER BY seq`, maxSeq)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	missing, twice, deliveries := hooks.check(ids)
	if len(missing) > 0 {
		t.Errorf("%d events never delivered, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	if len(twice) > 0 {
		t.Errorf("%d events delivered with two different bodies, e.g. %v", len(twice), twice[:min(5, len(twice))])
	}
	if n := cl.internal.Load(); n > 0 {
		t.Errorf("%d answers were 500", n)
	}

	first1, first2 := cl.firstWriteAfter(lost1), cl.firstWriteAfter(lost2)
	t.Logf("drill (load phases %v): %d intents answered 201, %d debits answered, %d payments recorded and decided, %d events (%d deliveries); %d answers 503 database_unavailable, %d other 503, 0 answers 500",
		*drillLoad, len(intents), len(debits), len(paid), len(ids), deliveries, cl.dbUnavailable.Load(), cl.otherUnavailable.Load())
	t.Logf("kill -9: first successful write %v after the kill (promote took %v)", first1.Sub(lost1).Round(time.Millisecond), promoted1.Sub(lost1).Round(time.Millisecond))
	t.Logf("SIGSTOP: first successful write %v after the stop (promote took %v); database losses noticed by the probe: %d",
		first2.Sub(lost2).Round(time.Millisecond), promoted2.Sub(lost2).Round(time.Millisecond), d.Store().Losses())
	if first1.IsZero() || first2.IsZero() {
		t.Errorf("no successful write after a failover")
	}
	// The documented bound (docs/operating.md): writes are back within 30 s of the loss
	// plus the time the operator takes to promote.
	for _, f := range []struct{ lost, promoted, first time.Time }{{lost1, promoted1, first1}, {lost2, promoted2, first2}} {
		if f.first.Sub(f.promoted) > 30*time.Second {
			t.Errorf("writes came back %v after the promote, more than the 30 s bound", f.first.Sub(f.promoted))
		}
	}
	stopDaemon()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("serve did not stop")
	}
}

// syncStandby waits until pg streams to name synchronously.
func syncStandby(t *testing.T, pg *devnet.Postgres, name string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if name == "b" {
		adminExec(t, pg, `ALTER SYSTEM SET synchronous_standby_names = 'b'`, `SELECT pg_reload_conf()`)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var state string
		err := conn.QueryRow(context.Background(), `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1`, name).Scan(&state)
		if err == nil && state == "sync" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby %s is not synchronous: %q %v", name, state, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func adminExec(t *testing.T, pg *devnet.Postgres, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// drillClient is a storefront that retries a write under its
// Idempotency-Key until it gets an answer that is not 503 (or a transport
// error), as api/openapi.yaml tells clients to.
type drillClient struct {
	t    *testing.T
	base string
	key  string
	http *http.Client

	mu               sync.Mutex
	writes           []drillWrite
	internal         atomic.Int64
	dbUnavailable    atomic.Int64
	otherUnavailable atomic.Int64
}

type drillWrite struct{ started, answered time.Time }

func (c *drillClient) do(method, path, idem string, body any) (int, map[string]any, http.Header, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, resp.Header, nil
}

// write sends a write until it is answered other than 503, for at most
// two minutes, and returns that answer.
func (c *drillClient) write(method, path, idem string, body any) (int, map[string]any) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		started := time.Now()
		st, v, h, err := c.do(method, path, idem, body)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		switch {
		case st == 500:
			c.internal.Add(1)
			c.t.Errorf("%s %s: 500 %v", method, path, v)
			return st, v
		case st == 503:
			if e, _ := v["error"].(map[string]any); e != nil && e["code"] == "database_unavailable" {
				c.dbUnavailable.Add(1)
				if h.Get("Retry-After") == "" {
					c.t.Errorf("503 database_unavailable without Retry-After")
				}
			} else {
				c.otherUnavailable.Add(1)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		case st >= 400:
			c.t.Errorf("%s %s: %d %v", method, path, st, v)
			return st, v
		}
		c.mu.Lock()
		c.writes = append(c.writes, drillWrite{started, time.Now()})
		c.mu.Unlock()
		return st, v
	}
	c.t.Errorf("%s %s: no answer but 503 for two minutes", method, path)
	return 0, nil
}

func (c *drillClient) read(method, path string) (int, map[string]any) {
	st, v, _, err := c.do(method, path, "", nil)
	if err != nil {
		return 0, nil
	}
	return st, v
}

// firstWriteAfter is when the first write started after t was answered.
func (c *drillClient) firstWriteAfter(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for _, w := range c.writes {
		if w.started.After(t) && (first.IsZero() || w.answered.Before(first)) {
			first = w.answered
		}
	}
	return first
}

func (c *drillClient) waitFor(what string, within time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// payLog records the payments sent on litecoind.
type payLog struct {
	mu   sync.Mutex
	list []payment1
}

type payment1 struct{ intent, txid string }

func (p *payLog) pay(t *testing.T, ctx context.Context, ltc *devnet.Litecoind, intent map[string]any) {
	amount, err := strconv.ParseInt(intent["amount_base_units"].(string), 10, 64)
	if err != nil {
		t.Errorf("amount of %v: %v", intent["id"], err)
		return
	}
	txid, err := ltc.SendToAddress(ctx, intent["address"].(string), amount)
	if err != nil {
		t.Errorf("pay %v: %v", intent["id"], err)
		return
	}
	p.mu.Lock()
	p.list = append(p.list, payment1{intent["id"].(string), txid})
	p.mu.Unlock()
}

func (p *payLog) all() []payment1 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]payment1(nil), p.list...)
}

// hookLog is a webhook receiver that checks signatures and remembers each
// event's body.
type hookLog struct {
	mu         sync.Mutex
	bodies     map[string]string
	twice      map[string]bool
	deliveries int
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := webhooks.Verify([]byte(hookSecret), r.Header.Get(webhooks.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var ev struct{ ID string }
	_ = json.Unmarshal(body, &ev)
	id := r.Header.Get("Paywatch-Event-Id")
	if id == "" {
		id = ev.ID
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bodies == nil {
		h.bodies, h.twice = map[string]string{}, map[string]bool{}
	}
	if prev, ok := h.bodies[id]; ok && prev != string(body) {
		h.twice[id] = true
	}
	h.bodies[id] = string(body)
	h.deliveries++
	w.WriteHeader(200)
}

func (h *hookLog) check(ids []string) (missing, twice []string, deliveries int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if _, ok := h.bodies[id]; !ok {
			missing = append(missing, id)
		}
	}
	for id := range h.twice {
		twice = append(twice, id)
	}
	sort.Strings(twice)
	return missing, twice, h.deliveries
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
