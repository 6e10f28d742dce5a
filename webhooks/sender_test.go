package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
	"github.com/paywatch/paywatch/webhooks"
)

// receiver is a storefront's webhook endpoint: it verifies signatures
// (rejecting timestamps older than 5 minutes), dedupes on the event id and
// records what it got.
type receiver struct {
	secret []byte
	// fail answers 500 to the first failFirst valid deliveries, and to every
	// delivery of failSeq while failSeq is set.
	failFirst int
	failSeq   int64

	mu          sync.Mutex
	valid       int
	badSig      int
	inflight    int
	maxInflight int
	seqs        []int64 // every accepted delivery, in arrival order
	first       []int64 // first receipt of each id, in arrival order
	seen        map[string]int
}

func newReceiver(secret string) *receiver {
	return &receiver{secret: []byte(secret), seen: map[string]int{}}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.inflight++
	r.maxInflight = max(r.maxInflight, r.inflight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inflight--
		r.mu.Unlock()
	}()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "read", 400)
		return
	}
	if err := webhooks.Verify(r.secret, req.Header.Get(webhooks.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
		r.mu.Lock()
		r.badSig++
		r.mu.Unlock()
		http.Error(w, err.Error(), 400)
		return
	}
	var ev views.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" || ev.Seq == 0 || ev.Type == "" || len(ev.Data) == 0 {
		http.Error(w, "bad event", 400)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.valid++
	if r.valid <= r.failFirst || (r.failSeq != 0 && ev.Seq == r.failSeq) {
		http.Error(w, "try later", 500)
		return
	}
	r.seqs = append(r.seqs, ev.Seq)
	if r.seen[ev.ID] == 0 {
		r.first = append(r.first, ev.Seq)
	}
	r.seen[ev.ID]++
	w.WriteHeader(200)
}

func (r *receiver) unique() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// running is a sender started in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func start(st *store.Store, ep webhooks.Endpoint, opt webhooks.Options) *running {
	opt.Store = st
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	s := webhooks.New(ep, opt)
	go func() { r.done <- s.Run(ctx) }()
	return r
}

func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("sender: %v", err)
	}
}

func eventSeqs(t testing.TB, st *store.Store) map[string]int64 {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT id, seq FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		out[id] = seq
	}
	return out
}

// waitCursor waits until an endpoint's cursor is at the last event.
func waitCursor(t testing.TB, st *store.Store, name string) {
	t.Helper()
	waitFor(t, name+"'s cursor at the last event", 30*time.Second, func() bool {
		var behind bool
		err := st.Pool().QueryRow(context.Background(), `SELECT (SELECT last_seq FROM webhook_endpoints WHERE name = $1) <
			(SELECT max(seq) FROM events)`, name).Scan(&behind)
		return err == nil && !behind
	})
}

func TestDeliveryRetriesRestartsAndOrder(t *testing.T) {
	e := paywatchtest.New(t)
	recv := newReceiver("s3cret")
	recv.failFirst = 3
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ep := webhooks.Endpoint{Name: "shop", URL: srv.URL, Secret: []byte("s3cret")}
	opt := webhooks.Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Poll: 100 * time.Millisecond, Batch: 4}

	for i := range 10 {
		e.CreateIntent("order", fmt.Sprintf("ORD-W%d", i), "", "10.00", "ETH")
	}
	a := start(e.Store, ep, opt)
	waitFor(t, "5 deliveries", 20*time.Second, func() bool { return recv.unique() >= 5 })
	a.stop(t) // may interrupt a delivery: it is sent again

	for i := range 10 {
		e.CreateIntent("order", fmt.Sprintf("ORD-X%d", i), "", "10.00", "ETH")
	}
	// Two instances now: they never deliver the endpoint at the same time.
	b := start(e.Store, ep, opt)
	c := start(e.Store, ep, opt)
	for i := range 5 {
		e.CreateIntent("order", fmt.Sprintf("ORD-Y%d", i), "", "10.00", "ETH")
	}
	want := eventSeqs(t, e.Store)
	if len(want) != 25 {
		t.Fatalf("%d events, want 25", len(want))
	}
	waitFor(t, "every event", 30*time.Second, func() bool { return recv.unique() == len(want) })
	// The receiver may have the last event before its delivery commits.
	waitCursor(t, e.Store, "shop")
	b.stop(t)
	c.stop(t)

	recv.mu.Lock()
	defer recv.mu.Unlock()
	for id, seq := range want {
		if recv.seen[id] == 0 {
			t.Fatalf("event %s (seq %d) never arrived", id, seq)
		}
	}
	for i := 1; i < len(recv.first); i++ {
		if recv.first[i] <= recv.first[i-1] {
			t.Fatalf("events first arrived out of seq order: %v", recv.first)
		}
	}
	if recv.badSig != 0 || recv.maxInflight != 1 {
		t.Fatalf("%d bad signatures, %d concurrent deliveries (want 0 and 1)", recv.badSig, recv.maxInflight)
	}
	// The delivery log: three retries, then the first event delivered; the
	// cursor at the last event.
	ctx := context.Background()
	var retries, delivered int
	var lastSeq, maxSeq int64
	err := e.Store.Pool().QueryRow(ctx, `SELECT
		(SELECT count(*) FROM webhook_attempts WHERE endpoint = 'shop' AND outcome = 'retry'),
		(SELECT count(DISTINCT event_seq) FROM webhook_attempts WHERE endpoint = 'shop' AND outcome = 'delivered'),
		(SELECT last_seq FROM webhook_endpoints WHERE name = 'shop'), (SELECT max(seq) FROM events)`).Scan(&retries, &delivered, &lastSeq, &maxSeq)
	if err != nil {
		t.Fatal(err)
	}
	if retries != 3 || delivered != len(want) || lastSeq != maxSeq {
		t.Fatalf("log: %d retries, %d events delivered, cursor %d of %d", retries, delivered, lastSeq, maxSeq)
	}
	status, body := e.Do("GET", "/v1/webhooks/deliveries?endpoint=shop&limit=1000", "operator", nil)
	var log struct {
		Deliveries []struct {
			Outcome  string `json:"outcome"`
			EventSeq int64  `json:"event_seq"`
			Attempt  int    `json:"attempt"`
			Status   *int   `json:"status_code"`
		} `json:"deliveries"`
	}
	if err := json.Unmarshal(body, &log); status != 200 || err != nil || len(log.Deliveries) < len(want)+3 {
		t.Fatalf("deliveries API: %d %s", status, body)
	}
	oldest := log.Deliveries[len(log.Deliveries)-1]
	if oldest.Outcome != "retry" || oldest.Status == nil || *oldest.Status != 500 || oldest.Attempt != 1 {
		t.Fatalf("first logged attempt: %+v", oldest)
	}
	if status, _ := e.Do("GET", "/v1/webhooks/deliveries", "storefront", nil); status != 403 {
		t.Fatalf("storefront key on the delivery log: %d", status)
	}
}

func TestGiveUpMarksFailedAndRedeliverSendsAgain(t *testing.T) {
	e := paywatchtest.New(t)
	for i := range 3 {
		e.CreateIntent("order", fmt.Sprintf("ORD-G%d", i), "", "10.00", "ETH")
	}
	seqs := eventSeqs(t, e.Store)
	var second int64
	for _, s := range seqs {
		if second == 0 || s < second {
			second = s
		}
	}
	second++ // the second event always fails
	recv := newReceiver("k")
	recv.failSeq = second
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ep := webhooks.Endpoint{Name: "flaky", URL: srv.URL, Secret: []byte("k")}
	opt := webhooks.Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, GiveUpAfter: 150 * time.Millisecond,
		Poll: 50 * time.Millisecond}
	s := start(e.Store, ep, opt)
	waitFor(t, "the other two events", 20*time.Second, func() bool { return recv.unique() == 2 })
	ctx := context.Background()
	var failed int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE endpoint = 'flaky' AND outcome = 'failed' AND event_seq = $1`,
		second).Scan(&failed); err != nil || failed != 1 {
		t.Fatalf("failed rows for seq %d: %d %v", second, failed, err)
	}
	// The receiver is fixed; an operator redelivers from the failed event.
	recv.mu.Lock()
	recv.failSeq = 0
	recv.mu.Unlock()
	if _, err := e.Store.RedeliverWebhook(ctx, "flaky", second, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the redelivered event", 20*time.Second, func() bool { return recv.unique() == 3 })
	waitCursor(t, e.Store, "flaky")
	s.stop(t)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if recv.seqs[2] != second || recv.seqs[3] != second+1 {
		t.Fatalf("deliveries %v: want the redelivery from seq %d in order", recv.seqs, second)
	}
	if _, err := e.Store.RedeliverWebhook(ctx, "flaky", second+100, time.Now()); !errors.Is(err, store.ErrCheck) {
		t.Fatalf("moving the cursor forward: %v", err)
	}
}

func TestVerifyRejectsStaleAndForged(t *testing.T) {
	secret, body := []byte("k"), []byte(`{"id":"ev_1"}`)
	now := time.Unix(1_800_000_000, 0)
	sig := func(t int64, b []byte) string {
		return "t=" + strconv.FormatInt(t, 10) + ",v1=" + webhooks.Sign(secret, t, b)
	}
	if err := webhooks.Verify(secret, sig(now.Unix()-10, body), body, now, 5*time.Minute); err != nil {
		t.Fatalf("valid: %v", err)
	}
	for name, h := range map[string]string{
		"stale":    sig(now.Add(-6*time.Minute).Unix(), body),
		"future":   sig(now.Add(6*time.Minute).Unix(), body),
		"tampered": sig(now.Unix(), []byte(`{"id":"ev_2"}`)),
		"missing":  "",
		"no sig":   "t=" + strconv.FormatInt(now.Unix(), 10),
	} {
		if err := webhooks.Verify(secret, h, body, now, 5*time.Minute); !errors.Is(err, webhooks.ErrBadSignature) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := webhooks.Verify([]byte("other"), sig(now.Unix(), body), body, now, 5*time.Minute); !errors.Is(err, webhooks.ErrBadSignature) {
		t.Fatalf("wrong secret: %v", err)
	}
}
