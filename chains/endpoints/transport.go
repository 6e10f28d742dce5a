package endpoints

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Placeholder is the base URL a chain client is given when it sends
// through a pool: the pool replaces its scheme and host with the chosen
// endpoint's and appends its path and query to the endpoint's. It holds no
// secret, so a client's error naming it leaks nothing.
const Placeholder = "http://endpoints.invalid"

// pin is what a pinned context's requests share: the endpoint that served
// the first of them and the height they read.
type pin struct {
	mu      sync.Mutex
	name    string // "" until the first request is served
	minHead int64
	forced  bool  // a probe of one endpoint: name is fixed from the start
	pool    *Pool // the pool that served, for ObserveHead
	// verify: a second source's reads (Verify): never the endpoint named
	// avoid, never a scanning one when avoid is unknown ("").
	verify bool
	avoid  string
	// elsewhere: reads that prefer another endpoint than the scanner's
	// (Elsewhere).
	elsewhere bool
	// refused are endpoints Refuse turned away: no read of this pin goes
	// to them again.
	refused map[string]bool
	// answered are the endpoints that answered any of the pin's requests
	// (OnlyServer).
	answered map[string]bool
}

type pinKey struct{}

// Pin returns a context whose requests go to one endpoint: the one that
// serves the first of them. height > 0 is the block they read: only an
// endpoint that showed a head at or above it serves them, so "not found",
// null or empty is never the answer of an endpoint that has not seen the
// block. A chain client pins the reads of one block (its hash, header,
// transactions, logs or receipts) and of one tip. Without a pool's
// transport a pin does nothing.
//
// A context pinned already keeps its pin (a read inside a read, a probe of
// one endpoint).
func Pin(ctx context.Context, height int64) context.Context {
	if pinOf(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, pinKey{}, &pin{minHead: height})
}

// Verify returns a context whose requests are a second source's reads of
// a block the endpoint named scannedBy served to the scanner (issue 33
// item 5): they go to one endpoint, of another name, that showed height
// (its head at or above it), an endpoint of role verify before one of role
// both. scannedBy "" (not known) leaves only endpoints of role verify.
// When none can serve, a request fails with ErrNoEndpoint: the transfer is
// not verified. It replaces a pin ctx had.
func Verify(ctx context.Context, scannedBy string, height int64) context.Context {
	return context.WithValue(ctx, pinKey{}, &pin{minHead: height, verify: true, avoid: scannedBy})
}

// Elsewhere returns a context whose requests, pinned to one endpoint as
// Pin's are, go to another endpoint than the one that serves the scanner
// now where there is one (an endpoint of role verify first): the
// reconciler's reads are a second look, not the scanner's answers again.
func Elsewhere(ctx context.Context, height int64) context.Context {
	return context.WithValue(ctx, pinKey{}, &pin{minHead: height, elsewhere: true})
}

// on returns a context whose requests go to endpoint name only (a probe).
func on(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, pinKey{}, &pin{name: name, forced: true})
}

func pinOf(ctx context.Context) *pin {
	p, _ := ctx.Value(pinKey{}).(*pin)
	return p
}

// ServedBy returns the name of the endpoint that served ctx's pinned
// requests ("" when none has yet or ctx is not pinned).
func ServedBy(ctx context.Context) string {
	if p := pinOf(ctx); p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.name
	}
	return ""
}

// OnlyServer returns the name of the endpoint that answered every one of
// ctx's pinned requests so far, "" when none did or when several did (a
// read moved on after a failure or a Refuse, a batch whose blocks came
// from two). A chain client names it as the endpoint that served a block
// (chains.Block.Endpoint): a second source must be another one, and a
// block read from two is verified by an endpoint of role verify only.
func OnlyServer(ctx context.Context) string {
	p := pinOf(ctx)
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.answered) != 1 {
		return ""
	}
	for name := range p.answered {
		return name
	}
	return ""
}

// ObserveHead records that the endpoint that served ctx's pinned requests
// answered head h (a chain client calls it with the tip it read). It does
// nothing without a pin or a pool.
func ObserveHead(ctx context.Context, h int64) {
	p := pinOf(ctx)
	if p == nil {
		return
	}
	p.mu.Lock()
	pool, name := p.pool, p.name
	p.mu.Unlock()
	if pool != nil && name != "" {
		pool.observeHead(name, h)
	}
}

// Refuse turns away the endpoint that served ctx's pinned reads: it
// answered one of them as an endpoint that does not hold the block it
// showed it holds ("not found", null or empty for a height at or below its
// head, or a follow-up that is not the block's own: a load balancer's
// stale backend). ctx's next reads go to another endpoint that showed the
// height, which the caller asks again at once; the refusal counts with the
// endpoint's errors. It reports whether it turned one away: false without
// a pool, before a read was served, on a probe, when the endpoint never
// showed the height (its "not found" is then the answer the caller
// expects), or when no other endpoint did (the answer stands).
func Refuse(ctx context.Context, why string) bool {
	pn := pinOf(ctx)
	if pn == nil {
		return false
	}
	pn.mu.Lock()
	defer pn.mu.Unlock()
	if pn.pool == nil || pn.name == "" || pn.forced || pn.minHead <= 0 {
		return false
	}
	if !pn.pool.refuse(pn.name, pn.minHead, pn.refused, why) {
		return false
	}
	if pn.refused == nil {
		pn.refused = map[string]bool{}
	}
	pn.refused[pn.name] = true
	pn.name = ""
	return true
}

// Transport returns the pool's http.RoundTripper for requests of the
// scanner (scan is false for a verifier's reads, which any endpoint
// serves). Requests go to Placeholder; see there.
func (p *Pool) Transport(scan bool) http.RoundTripper { return &transport{pool: p, scan: scan} }

type transport struct {
	pool *Pool
	scan bool
}

// RoundTrip sends req to the chosen endpoint, and on a connection error, a
// gateway failure or a throttle to the next one (unless pinned to an
// endpoint that already served: then the error is the caller's, who
// retries the whole read).
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	pn := pinOf(ctx)
	exclude := map[string]bool{}
	var deadline time.Time
	var lastWhy string
	for {
		var q ask
		if pn != nil {
			pn.mu.Lock()
			q = ask{pinned: pn.name, minHead: pn.minHead, probe: pn.forced, verify: pn.verify, avoid: pn.avoid, elsewhere: pn.elsewhere}
			for name := range pn.refused {
				exclude[name] = true
			}
			pn.mu.Unlock()
		}
		pinned := q.pinned
		q.scan, q.exclude = t.scan, exclude
		c := t.pool.pick(q)
		if c.e == nil {
			if c.why != "" {
				lastWhy = c.why
			}
			now := t.pool.clk.Now()
			if deadline.IsZero() {
				deadline = now.Add(t.pool.opt.MaxWait)
			}
			if c.wait <= 0 || now.Add(c.wait).After(deadline) {
				return nil, fmt.Errorf("%w: %s", ErrNoEndpoint, lastWhy)
			}
			tm := t.pool.clk.NewTimer(c.wait)
			select {
			case <-ctx.Done():
				tm.Stop()
				return nil, ctx.Err()
			case <-tm.C:
			}
			continue
		}
		if pn != nil {
			pn.mu.Lock()
			if pn.name == "" {
				pn.name = c.e.spec.Name
			}
			pn.pool = t.pool
			pn.mu.Unlock()
		}
		resp, err := t.send(req, c.e, body)
		if err == nil {
			if pn != nil {
				pn.mu.Lock()
				if pn.answered == nil {
					pn.answered = map[string]bool{}
				}
				pn.answered[c.e.spec.Name] = true
				pn.mu.Unlock()
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lastWhy = c.e.spec.Name + ": " + err.Error()
		if pinned != "" {
			// The block's other reads came from this endpoint: its
			// failure fails the read, which the caller starts again.
			return nil, fmt.Errorf("%w: %s", ErrNoEndpoint, lastWhy)
		}
		if pn != nil {
			pn.mu.Lock()
			if pn.name == c.e.spec.Name && !pn.forced {
				pn.name = ""
			}
			pn.mu.Unlock()
		}
		exclude[c.e.spec.Name] = true
	}
}

// errFailed and errThrottled are send's verdicts on an answer that is not
// the endpoint's to give.
var (
	errFailed    = errors.New("failed")
	errThrottled = errors.New("throttled")
)

// send sends one request to e and classifies its answer: a connection
// error or a gateway failure (502, 504, 503 without a rate-limit body) is
// a failure; 429, or 403 or 503 with a rate-limit body, a throttle;
// anything else (a JSON-RPC error with 500 or 404 included) is the
// endpoint's answer, returned.
func (t *transport) send(req *http.Request, e *endpoint, body []byte) (*http.Response, error) {
	out := req.Clone(req.Context())
	u := *e.target
	u.Path = e.target.Path + req.URL.Path
	u.RawPath = ""
	switch {
	case e.target.RawQuery == "":
		u.RawQuery = req.URL.RawQuery
	case req.URL.RawQuery != "":
		u.RawQuery = e.target.RawQuery + "&" + req.URL.RawQuery
	}
	out.URL = &u
	out.Host = ""
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	// The client's own credentials were for the placeholder: each
	// endpoint sends its own.
	out.Header.Del("Authorization")
	if e.user != "" {
		out.SetBasicAuth(e.user, e.pass)
	}
	for k, vs := range e.spec.Header {
		out.Header[k] = vs
	}
	start := t.pool.clk.Now()
	resp, err := t.pool.opt.Base.RoundTrip(out)
	took := t.pool.clk.Now().Sub(start)
	if err != nil {
		if req.Context().Err() != nil {
			t.pool.release(e)
			return nil, err
		}
		// The error may quote the URL, which may hold a key.
		t.pool.failed(e, "connection error")
		return nil, errFailed
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		t.pool.throttled(e, retryAfter(resp.Header.Get("Retry-After"), t.pool.clk.Now()))
		drain(resp)
		return nil, errThrottled
	case http.StatusForbidden, http.StatusServiceUnavailable:
		peek, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if ra := resp.Header.Get("Retry-After"); ra != "" || rateLimited(peek) {
			t.pool.throttled(e, retryAfter(ra, t.pool.clk.Now()))
			drain(resp)
			return nil, errThrottled
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			t.pool.failed(e, resp.Status)
			drain(resp)
			return nil, errFailed
		}
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(peek), resp.Body), resp.Body}
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		t.pool.failed(e, resp.Status)
		drain(resp)
		return nil, errFailed
	}
	t.pool.succeeded(e, took)
	return resp, nil
}

// release ends a request of e that was cancelled: neither a success nor a
// failure of the endpoint.
func (p *Pool) release(e *endpoint) {
	p.mu.Lock()
	e.inflight--
	p.mu.Unlock()
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// rateLimited reports whether an answer's body says the request was
// refused for its rate or quota (TronGrid, Infura, Alchemy, QuickNode and
// Helius word it so).
func rateLimited(body []byte) bool {
	b := strings.ToLower(string(body))
	for _, w := range []string{"rate limit", "rate-limit", "ratelimit", "too many requests", "exceeded", "quota", "throttl", "capacity"} {
		if strings.Contains(b, w) {
			return true
		}
	}
	return false
}

// retryAfter parses a Retry-After header: seconds or an HTTP date (0: none
// or unparsable).
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Again reports whether a pinned read that failed with err is to be made
// again at once: err is not ctx's end, and Refuse turned away the endpoint
// that served the read (see there). A chain client loops on it around the
// reads of one block.
func Again(ctx context.Context, err error, why string) bool {
	return err != nil && ctx.Err() == nil && Refuse(ctx, why)
}
