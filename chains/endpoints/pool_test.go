package endpoints_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/clock"
)

// node is a test endpoint: it answers with its name unless told to fail.
type node struct {
	name string
	srv  *httptest.Server

	mu      sync.Mutex
	answer  func(w http.ResponseWriter) bool // true: answered, do not answer normally
	got     []*http.Request
	bodies  []string
	calls   int
	headers http.Header
}

func newNode(t *testing.T, name string) *node {
	n := &node{name: name}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		n.mu.Lock()
		n.calls++
		n.got = append(n.got, r)
		n.bodies = append(n.bodies, string(b))
		n.headers = r.Header.Clone()
		answer := n.answer
		n.mu.Unlock()
		if answer != nil && answer(w) {
			return
		}
		io.WriteString(w, n.name)
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *node) set(f func(w http.ResponseWriter) bool) {
	n.mu.Lock()
	n.answer = f
	n.mu.Unlock()
}

func (n *node) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls
}

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func newPool(t *testing.T, clk clock.Clock, specs ...endpoints.Spec) *endpoints.Pool {
	t.Helper()
	p, err := endpoints.New(specs, endpoints.Options{Network: "test", MaxLagBlocks: 3, LagGrace: 30 * time.Second, MaxWait: 10 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(n *node, prio int) endpoints.Spec {
	return endpoints.Spec{Name: n.name, URL: n.srv.URL, Scans: true, Priority: prio}
}

// get sends one POST through the pool and returns who answered.
func get(ctx context.Context, t *testing.T, p *endpoints.Pool, path string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoints.Placeholder+path, strings.NewReader(`{"method":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: p.Transport(true)}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), errors.New(resp.Status)
	}
	return string(b), nil
}

func state(p *endpoints.Pool, name string) endpoints.Status {
	for _, s := range p.Status() {
		if s.Name == name {
			return s
		}
	}
	return endpoints.Status{}
}

// Issue 33 item 2: the preferred endpoint down, requests go to the next;
// after its backoff it is tried again and serves when it answers.
func TestFailoverWhenThePreferredEndpointIsDown(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	if who, err := get(ctx, t, p, ""); err != nil || who != "a" {
		t.Fatalf("healthy: %q %v", who, err)
	}
	a.set(func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadGateway); return true })
	for i := 0; i < 3; i++ {
		if who, err := get(ctx, t, p, ""); err != nil || who != "b" {
			t.Fatalf("a down, call %d: %q %v", i, who, err)
		}
	}
	if s := state(p, "a"); s.State != endpoints.Unreachable || s.Errors != 1 {
		t.Fatalf("a: %+v", s)
	}
	if n := a.count(); n != 2 {
		t.Fatalf("a was asked %d times during its backoff, want 2", n)
	}
	a.set(nil)
	clk.Advance(time.Second)
	if who, err := get(ctx, t, p, ""); err != nil || who != "a" {
		t.Fatalf("a back: %q %v", who, err)
	}
	if s := state(p, "a"); s.State != endpoints.Healthy {
		t.Fatalf("a: %+v", s)
	}
	// A connection refused is unreachable too; the answer comes from b.
	a.srv.Close()
	if who, err := get(ctx, t, p, ""); err != nil || who != "b" {
		t.Fatalf("a closed: %q %v", who, err)
	}
}

// Issue 33 item 2: a throttle is backed off for Retry-After, not taken
// as an outage; 403 or 503 with a rate-limit body is a throttle; a plain
// 503 a failure; a 403 or 500 without one the endpoint's answer.
func TestThrottledIsBackedOffForRetryAfter(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	a.set(func(w http.ResponseWriter) bool {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	if who, err := get(ctx, t, p, ""); err != nil || who != "b" {
		t.Fatalf("a throttles: %q %v", who, err)
	}
	a.set(nil)
	clk.Advance(6 * time.Second)
	if who, _ := get(ctx, t, p, ""); who != "b" {
		t.Fatalf("before Retry-After: %q", who)
	}
	if s := state(p, "a"); s.State != endpoints.Throttled || s.Throttles != 1 {
		t.Fatalf("a: %+v", s)
	}
	if !p.Serving() {
		t.Fatal("throttled is not down")
	}
	clk.Advance(time.Second)
	if who, _ := get(ctx, t, p, ""); who != "a" {
		t.Fatalf("after Retry-After: %q", who)
	}

	for _, tc := range []struct {
		status int
		body   string
		want   endpoints.State
		who    string
	}{
		{http.StatusForbidden, `{"Error":"request rate exceeded the allowed_rps(15)"}`, endpoints.Throttled, "b"},
		{http.StatusServiceUnavailable, `{"error":"daily request count exceeded, request rate limited"}`, endpoints.Throttled, "b"},
		{http.StatusServiceUnavailable, `backend down`, endpoints.Unreachable, "b"},
		{http.StatusForbidden, `invalid api key`, endpoints.Healthy, "invalid api key"},
		{http.StatusInternalServerError, `{"error":{"code":-5,"message":"Block not found"}}`, endpoints.Healthy, `{"error":{"code":-5,"message":"Block not found"}}`},
	} {
		clk.Advance(10 * time.Minute)
		if who, err := get(ctx, t, p, ""); who != "a" || err != nil {
			t.Fatalf("reset: %q %v", who, err)
		}
		a.set(func(w http.ResponseWriter) bool { w.WriteHeader(tc.status); io.WriteString(w, tc.body); return true })
		who, _ := get(ctx, t, p, "")
		a.set(nil)
		if who != tc.who || state(p, "a").State != tc.want {
			t.Errorf("%d %s: answered %q, a %s; want %q, %s", tc.status, tc.body, who, state(p, "a").State, tc.who, tc.want)
		}
	}
}

// Issue 33 item 2: an endpoint is lagging only when it stays behind the
// best head by more than the bound for the grace time, not on one sample;
// a head that goes backwards is ignored; the best head is the highest one
// proved.
func TestLaggingTakesTheGraceTimeAndHeadsNeverGoBack(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	heads := map[string]int64{"a": 100, "b": 100}
	probes := endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
		who, err := get(ctx, t, p, "")
		return heads[who], err
	}}
	p.Probe(ctx, probes, false, time.Second)
	if p.Best() != 100 || state(p, "a").Head != 100 || state(p, "b").Head != 100 {
		t.Fatalf("heads: %+v", p.Status())
	}
	heads["a"] = 110
	p.Probe(ctx, probes, false, time.Second)
	if s := state(p, "b"); s.State != endpoints.Healthy || s.Lag != 10 {
		t.Fatalf("b after one sample: %+v", s)
	}
	clk.Advance(29 * time.Second)
	if s := state(p, "b"); s.State != endpoints.Healthy {
		t.Fatalf("b within grace: %+v", s)
	}
	clk.Advance(time.Second)
	if s := state(p, "b"); s.State != endpoints.Lagging {
		t.Fatalf("b after grace: %+v", s)
	}
	// a's head going back (a stale backend) is ignored, and does not make
	// b's lag look smaller.
	heads["a"] = 95
	p.Probe(ctx, probes, false, time.Second)
	if s := state(p, "a"); s.Head != 110 || s.HeadBackwards != 1 || p.Best() != 110 {
		t.Fatalf("a went back: %+v best %d", s, p.Best())
	}
	// The lagging b serves nothing while a serves, even at a lower priority.
	p2 := newPool(t, clk, spec(b, 0), spec(a, 1))
	heads = map[string]int64{"a": 200, "b": 150}
	probes2 := endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
		who, err := get(ctx, t, p2, "")
		return heads[who], err
	}}
	p2.Probe(ctx, probes2, false, time.Second)
	clk.Advance(31 * time.Second)
	p2.Probe(ctx, probes2, false, time.Second)
	if who, _ := get(ctx, t, p2, ""); who != "a" {
		t.Fatalf("lagging b preferred: %q", who)
	}
	// b catching up is healthy again at its next probe.
	heads["b"] = 200
	p2.Probe(ctx, probes2, false, time.Second)
	if who, _ := get(ctx, t, p2, ""); who != "b" {
		t.Fatalf("b caught up but not used: %q", who)
	}
	// Every endpoint lagging: the pool cannot serve within the bound.
	p3 := newPool(t, clk, spec(a, 0))
	heads = map[string]int64{"a": 10}
	p3.Probe(ctx, endpoints.Probes{Head: func(ctx context.Context) (int64, error) { return heads["a"], nil }}, false, time.Second)
	if !p3.Serving() {
		t.Fatal("a lone endpoint at the best head is serving")
	}
}

// Issue 33 item 3: a pinned read goes only to an endpoint that showed the
// block, and all its follow-ups to the endpoint that served the first; a
// follow-up's failure fails the read instead of asking an endpoint that
// may not have the block.
func TestPinnedReadsStayOnTheEndpointThatHasTheBlock(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	heads := map[string]int64{"a": 100, "b": 106}
	p.Probe(ctx, endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
		who, err := get(ctx, t, p, "")
		return heads[who], err
	}}, false, time.Second)
	block := endpoints.Pin(ctx, 105)
	for i := 0; i < 3; i++ {
		if who, err := get(block, t, p, ""); err != nil || who != "b" {
			t.Fatalf("read %d of block 105: %q %v", i, who, err)
		}
	}
	if endpoints.ServedBy(block) != "b" {
		t.Fatalf("served by %q", endpoints.ServedBy(block))
	}
	b.set(func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadGateway); return true })
	if _, err := get(block, t, p, ""); !errors.Is(err, endpoints.ErrNoEndpoint) {
		t.Fatalf("pinned follow-up on a failing endpoint: %v", err)
	}
	// Block 106 is b's alone too: a, preferred, is not asked for it, and
	// with b failing the read fails.
	before := a.count()
	clk.Advance(time.Minute) // past b's backoff: it is asked again, and fails
	if _, err := get(endpoints.Pin(ctx, 106), t, p, ""); !errors.Is(err, endpoints.ErrNoEndpoint) || !strings.Contains(err.Error(), "a has not shown height 106") {
		t.Fatalf("block only b showed, b failing: %v", err)
	}
	if a.count() != before {
		t.Fatal("an endpoint was asked for a block it has not shown")
	}
	// Above every head proved, an endpoint is asked (its "not found" is
	// the truth there: the scanner's check above the tip); a, lagging by
	// now, is not.
	b.set(nil)
	clk.Advance(time.Minute)
	if who, err := get(endpoints.Pin(ctx, 107), t, p, ""); err != nil || who != "b" {
		t.Fatalf("above the best head: %q %v", who, err)
	}
	// A tip read pinned at 0 records the head its endpoint answered.
	tip := endpoints.Pin(ctx, 0)
	who, err := get(tip, t, p, "")
	if err != nil {
		t.Fatal(err)
	}
	endpoints.ObserveHead(tip, 120)
	if state(p, who).Head != 120 || p.Best() != 120 {
		t.Fatalf("observed head: %+v", p.Status())
	}
}

// Issue 33 item 4: a token bucket paces each endpoint on the pool's clock,
// spilling to the next endpoint and then waiting; a spent daily budget
// takes the endpoint out until the next UTC day.
func TestPacingAndDailyBudget(t *testing.T) {
	clk := clock.NewFake(t0)
	a := newNode(t, "a")
	sa := spec(a, 0)
	sa.RatePerSecond, sa.Burst = 2, 2
	p := newPool(t, clk, sa)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := get(ctx, t, p, ""); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { _, err := get(ctx, t, p, ""); done <- err }()
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if a.count() != 2 {
		t.Fatalf("the third call was sent before a token: %d", a.count())
	}
	clk.Advance(500 * time.Millisecond)
	if err := <-done; err != nil || a.count() != 3 {
		t.Fatalf("paced call: %v, %d calls", err, a.count())
	}

	b, c := newNode(t, "b"), newNode(t, "c")
	sb := spec(b, 0)
	sb.RatePerSecond, sb.Burst, sb.DailyBudget = 100, 100, 3
	p = newPool(t, clk, sb, spec(c, 1))
	for i := 0; i < 5; i++ {
		who, err := get(ctx, t, p, "")
		if want := map[bool]string{true: "b", false: "c"}[i < 3]; err != nil || who != want {
			t.Fatalf("call %d: %q %v, want %s", i, who, err, want)
		}
	}
	if s := state(p, "b"); s.State != endpoints.OverBudget || s.BudgetUsed != 3 || s.BudgetShare != 1 {
		t.Fatalf("b: %+v", s)
	}
	clk.Set(time.Date(2026, 12, 7, 0, 0, 1, 0, time.UTC))
	if who, _ := get(ctx, t, p, ""); who != "b" {
		t.Fatalf("next day: %q", who)
	}
	if s := state(p, "b"); s.BudgetUsed != 1 || s.Calls != 4 {
		t.Fatalf("b next day: %+v", s)
	}
}

// Issue 33 item 1: the endpoint's credentials and headers reach it; its
// URL and secrets never appear in an error or the status.
func TestCredentialsReachTheEndpointAndNothingElse(t *testing.T) {
	clk := clock.NewFake(t0)
	a := newNode(t, "a")
	sa := spec(a, 0)
	sa.URL = strings.Replace(a.srv.URL, "http://", "http://user:s3cret@", 1) + "/v2/KEYINPATH?apikey=KEYINQUERY"
	sa.Header = http.Header{"Tron-Pro-Api-Key": {"HEADERKEY"}}
	p := newPool(t, clk, sa)
	ctx := context.Background()
	if _, err := get(ctx, t, p, "/wallet/getnowblock?visible=true"); err != nil {
		t.Fatal(err)
	}
	r := a.got[0]
	if r.URL.Path != "/v2/KEYINPATH/wallet/getnowblock" || r.URL.Query().Get("apikey") != "KEYINQUERY" || r.URL.Query().Get("visible") != "true" {
		t.Fatalf("request URL: %s", r.URL)
	}
	if u, pw, ok := r.BasicAuth(); !ok || u != "user" || pw != "s3cret" || a.headers.Get("TRON-PRO-API-KEY") != "HEADERKEY" || a.bodies[0] != `{"method":"x"}` {
		t.Fatalf("credentials: %v %q %q %q", ok, u, a.headers.Get("TRON-PRO-API-KEY"), a.bodies[0])
	}
	a.srv.Close()
	_, err := get(ctx, t, p, "")
	if !errors.Is(err, endpoints.ErrNoEndpoint) {
		t.Fatalf("all down: %v", err)
	}
	st, _ := json.Marshal(p.Status())
	host := strings.TrimPrefix(a.srv.URL, "http://")
	for _, secret := range []string{"s3cret", "KEYINPATH", "KEYINQUERY", "HEADERKEY", host} {
		if strings.Contains(err.Error(), secret) || strings.Contains(string(st), secret) {
			t.Fatalf("%q leaked: %v / %s", secret, err, st)
		}
	}
}

// Issue 33 item 2: an endpoint on another chain is not used; the check is
// per endpoint.
func TestWrongChainEndpointIsNotUsed(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	p.Probe(ctx, endpoints.Probes{Chain: func(ctx context.Context) (string, error) {
		who, err := get(ctx, t, p, "")
		if who == "a" {
			return "testnet", err
		}
		return "", err
	}}, true, time.Second)
	if s := state(p, "a"); s.State != endpoints.WrongChain || s.WrongChain != "testnet" {
		t.Fatalf("a: %+v", s)
	}
	for i := 0; i < 3; i++ {
		if who, _ := get(ctx, t, p, ""); who != "b" {
			t.Fatalf("wrong-chain a used: %q", who)
		}
	}
}

// Issue 33 item 4: the probe skips an endpoint whose head the scanner's
// tip reads showed within the interval: only the others are asked.
func TestProbeSkipsAnEndpointServingTips(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	probed := map[string]int{}
	done := make(chan error, 1)
	go func() {
		done <- p.Run(ctx, endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
			who, err := get(ctx, t, p, "")
			mu.Lock()
			probed[who]++
			mu.Unlock()
			return 10, err
		}}, time.Second)
	}()
	if err := clk.BlockUntil(ctx, 2); err != nil {
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond)
	tip := endpoints.Pin(ctx, 0)
	if who, err := get(tip, t, p, ""); err != nil || who != "a" {
		t.Fatalf("tip read: %q %v", who, err)
	}
	endpoints.ObserveHead(tip, 11)
	clk.Advance(500 * time.Millisecond)
	if err := clk.BlockUntil(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// b's second probe may still be running when both timers are set:
	// wait for it by its count.
	for {
		mu.Lock()
		pa, pb := probed["a"], probed["b"]
		mu.Unlock()
		if pb == 2 {
			if pa != 1 {
				t.Fatalf("a probed %d times though it served a tip within the interval", pa)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Issue 33 item 3: Refuse turns away, for one pinned read, an endpoint
// that showed the block and answered as if it lacked it: the read's next
// request goes to another endpoint that showed the block, and the refusal
// counts with the endpoint's errors. It turns none away without a pin, for
// a height the endpoint never showed, or when no other endpoint showed it
// (the answer stands).
func TestRefuseSendsTheBlockToAnotherEndpointThatShowedIt(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b, c := newNode(t, "a"), newNode(t, "b"), newNode(t, "c")
	p := newPool(t, clk, spec(a, 0), spec(b, 1), spec(c, 2))
	ctx := context.Background()
	heads := map[string]int64{"a": 100, "b": 100, "c": 90}
	p.Probe(ctx, endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
		who, err := get(ctx, t, p, "")
		return heads[who], err
	}}, false, time.Second)
	if endpoints.Refuse(ctx, "unpinned") || endpoints.Again(ctx, errors.New("x"), "unpinned") {
		t.Fatal("refused without a pin")
	}
	read := endpoints.Pin(ctx, 100)
	if endpoints.Refuse(read, "nothing served yet") {
		t.Fatal("refused before a read was served")
	}
	if who, err := get(read, t, p, ""); err != nil || who != "a" {
		t.Fatalf("first read of block 100: %q %v", who, err)
	}
	if endpoints.Again(read, nil, "no error") {
		t.Fatal("a read that succeeded is made again")
	}
	if !endpoints.Again(read, errors.New("not found"), "a stale backend") || endpoints.ServedBy(read) != "" {
		t.Fatalf("a not turned away: served by %q", endpoints.ServedBy(read))
	}
	for i := 0; i < 2; i++ {
		if who, err := get(read, t, p, ""); err != nil || who != "b" {
			t.Fatalf("read %d after a was turned away: %q %v", i, who, err)
		}
	}
	if s := state(p, "a"); s.Errors != 1 || s.State != endpoints.Healthy {
		t.Fatalf("a after the refusal: %+v", s)
	}
	// c never showed 100: b's answer stands.
	if endpoints.Refuse(read, "no other") {
		t.Fatal("b turned away with no other endpoint that showed block 100")
	}
	if who, err := get(read, t, p, ""); err != nil || who != "b" {
		t.Fatalf("after the answer stood: %q %v", who, err)
	}
	// A height above every head: the endpoint's "not found" is the truth.
	above := endpoints.Pin(ctx, 101)
	if who, err := get(above, t, p, ""); err != nil || who != "a" {
		t.Fatalf("read of block 101: %q %v", who, err)
	}
	if endpoints.Refuse(above, "above the best head") {
		t.Fatal("refused an endpoint for a block it never showed")
	}
}
