package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/webhooks"
)

// lockProbe answers each delivery after trying to lock the endpoint's row
// and looking for a transaction of ours left open: a POST made inside the
// delivery's transaction finds both.
type lockProbe struct {
	*receiver
	st       *store.Store
	endpoint string
	locked   chan string // what each probe found, one per delivery
}

func (p *lockProbe) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	found := ""
	tx, err := p.st.Pool().Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`)
		if err == nil {
			_, err = tx.Exec(ctx, `SELECT 1 FROM webhook_endpoints WHERE name = $1 FOR UPDATE`, p.endpoint)
		}
		_ = tx.Rollback(ctx)
	}
	if err != nil {
		found = "row locked: " + err.Error()
	}
	var open int
	if err := p.st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`).Scan(&open); err != nil {
		found += " " + err.Error()
	} else if open > 0 {
		found += fmt.Sprintf(" %d transactions open", open)
	}
	p.locked <- found
	p.receiver.ServeHTTP(w, req)
}

func TestNoDeliveryPOSTsInsideATransaction(t *testing.T) {
	e := paywatchtest.New(t)
	for i := range 3 {
		e.CreateIntent("order", fmt.Sprintf("ORD-L%d", i), "", "10.00", "ETH")
	}
	want := len(eventSeqs(t, e.Store))
	probe := &lockProbe{receiver: newReceiver("k"), st: e.Store, endpoint: "probe", locked: make(chan string, 100)}
	srv := httptest.NewServer(probe)
	defer srv.Close()
	s := start(e.Store, webhooks.Endpoint{Name: "probe", URL: srv.URL, Secret: []byte("k")}, webhooks.Options{Poll: 50 * time.Millisecond})
	waitFor(t, "every event", 20*time.Second, func() bool { return probe.unique() == want })
	waitCursor(t, e.Store, "probe")
	s.stop(t)
	close(probe.locked)
	n := 0
	for found := range probe.locked {
		n++
		if found != "" {
			t.Fatalf("delivery %d was POSTed inside a transaction: %s", n, found)
		}
	}
	if n < want {
		t.Fatalf("%d probes for %d events", n, want)
	}
}

// crashingTransport lets each POST through and, once the receiver has
// answered the delivery of crashSeq, takes the sender's database away (its
// pool closed) before the attempt can be recorded: the sender has crashed
// between its POST and its record.
type crashingTransport struct {
	st       *store.Store
	crashSeq int64
	crashed  chan struct{}
	once     sync.Once
}

func (c *crashingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	var ev struct {
		Seq int64 `json:"seq"`
	}
	if body, gerr := req.GetBody(); gerr == nil {
		_ = json.NewDecoder(body).Decode(&ev)
	}
	if err == nil && ev.Seq == c.crashSeq {
		c.once.Do(func() {
			c.st.Close()
			close(c.crashed)
		})
	}
	return resp, err
}

func TestCrashBetweenPOSTAndRecordResendsExactlyOnceMore(t *testing.T) {
	e := paywatchtest.New(t)
	for i := range 3 {
		e.CreateIntent("order", fmt.Sprintf("ORD-C%d", i), "", "10.00", "ETH")
	}
	seqs := eventSeqs(t, e.Store)
	var ordered []int64
	for _, s := range seqs {
		ordered = append(ordered, s)
	}
	slices.Sort(ordered)
	crashSeq := ordered[1]
	recv := newReceiver("k")
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ep := webhooks.Endpoint{Name: "crash", URL: srv.URL, Secret: []byte("k")}
	clk := clock.NewFake(time.Now())
	const claimFor = time.Minute
	opt := webhooks.Options{Clock: clk, ClaimFor: claimFor, Poll: time.Hour}

	// Sender A has its own connections, which the crash takes away.
	stA, err := store.Open(context.Background(), e.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	crash := &crashingTransport{st: stA, crashSeq: crashSeq, crashed: make(chan struct{})}
	optA := opt
	optA.Client = &http.Client{Transport: crash}
	a := start(stA, ep, optA)
	<-crash.crashed
	// A is now stuck retrying against a closed pool on the fake clock.
	if err := clk.BlockUntil(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	a.stop(t)

	var lastSeq int64
	var claimed bool
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT last_seq, claim_token IS NOT NULL FROM webhook_endpoints WHERE name = 'crash'`).
		Scan(&lastSeq, &claimed); err != nil {
		t.Fatal(err)
	}
	if lastSeq != ordered[0] || !claimed {
		t.Fatalf("after the crash: cursor %d (want %d, the last recorded) and claim held %v (want true)", lastSeq, ordered[0], claimed)
	}

	// Sender B waits while the dead sender's claim is live ...
	b := start(e.Store, ep, opt)
	if err := clk.BlockUntil(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	recv.mu.Lock()
	before := recv.seen[idOf(seqs, crashSeq)]
	recv.mu.Unlock()
	if before != 1 {
		t.Fatalf("seq %d received %d times while the claim was live, want 1", crashSeq, before)
	}
	// ... and takes it over once it expires.
	clk.Advance(claimFor)
	waitFor(t, "every event", 20*time.Second, func() bool { return recv.unique() == len(seqs) })
	waitCursor(t, e.Store, "crash")
	b.stop(t)

	recv.mu.Lock()
	defer recv.mu.Unlock()
	for id, seq := range seqs {
		want := 1
		if seq == crashSeq {
			want = 2
		}
		if recv.seen[id] != want {
			t.Fatalf("event seq %d received %d times, want %d (deliveries %v)", seq, recv.seen[id], want, recv.seqs)
		}
	}
	if !slices.IsSorted(recv.first) || recv.maxInflight != 1 {
		t.Fatalf("first arrivals %v (want seq order), %d concurrent POSTs (want 1)", recv.first, recv.maxInflight)
	}
}

func idOf(seqs map[string]int64, seq int64) string {
	for id, s := range seqs {
		if s == seq {
			return id
		}
	}
	return ""
}

func TestTwoSendersDeliverEachEventOnceInOrder(t *testing.T) {
	e := paywatchtest.New(t)
	recv := newReceiver("k")
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ep := webhooks.Endpoint{Name: "pair", URL: srv.URL, Secret: []byte("k")}
	opt := webhooks.Options{Poll: 20 * time.Millisecond, Batch: 3}
	a := start(e.Store, ep, opt)
	b := start(e.Store, ep, opt)
	for i := range 12 {
		e.CreateIntent("order", fmt.Sprintf("ORD-P%d", i), "", "10.00", "ETH")
	}
	seqs := eventSeqs(t, e.Store)
	waitFor(t, "every event", 30*time.Second, func() bool { return recv.unique() == len(seqs) })
	waitCursor(t, e.Store, "pair")
	a.stop(t)
	b.stop(t)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.seqs) != len(seqs) {
		t.Fatalf("%d deliveries of %d events, want each once: %v", len(recv.seqs), len(seqs), recv.seqs)
	}
	if !slices.IsSorted(recv.seqs) || recv.maxInflight != 1 {
		t.Fatalf("deliveries %v (want seq order), %d concurrent POSTs (want 1)", recv.seqs, recv.maxInflight)
	}
	var senders int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_attempts WHERE endpoint = 'pair' AND outcome = 'delivered'`).
		Scan(&senders); err != nil || senders != len(seqs) {
		t.Fatalf("%d delivered attempts logged, want %d: %v", senders, len(seqs), err)
	}
}
