package endpoints

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/logs"
)

// ErrNoEndpoint is a request no endpoint of the pool could serve in time:
// every endpoint is down, throttled, lagging, out of budget or on another
// chain, or none has shown it holds the block asked for. It is transient:
// the scanner retries its step.
var ErrNoEndpoint = errors.New("no endpoint can serve the request")

// State is what an endpoint is doing now.
type State string

// The endpoint states.
const (
	Healthy     State = "healthy"
	Lagging     State = "lagging"
	Throttled   State = "throttled"
	Unreachable State = "unreachable"
	WrongChain  State = "wrong_chain"
	// OverBudget is an endpoint whose daily budget is spent.
	OverBudget State = "over_budget"
)

// Spec is one endpoint as configured. URL and Header hold secrets.
type Spec struct {
	// Name is shown in the status, metrics and logs.
	Name string
	// URL is the endpoint's base URL; user:password in it is sent as basic
	// auth. A request's path and query are appended to it.
	URL string
	// Scans is false for an endpoint only used to verify (role verify).
	Scans bool
	// Priority: the lowest usable one is preferred.
	Priority int
	// Header is sent with every request (a provider key, Authorization).
	Header http.Header
	// RatePerSecond and Burst are the token bucket (0: unpaced).
	RatePerSecond float64
	Burst         int
	// DailyBudget is requests per UTC day (0: none).
	DailyBudget int64
}

// Options tune a pool.
type Options struct {
	// Network names the pool in logs.
	Network string
	// MaxLagBlocks is how far behind the best head an endpoint may be.
	MaxLagBlocks int64
	// LagGrace is how long it may be further behind before it is lagging
	// (default 30s).
	LagGrace time.Duration
	// MaxWait is how long a request waits for a token or a backed-off
	// endpoint before it fails with ErrNoEndpoint (default 15s).
	MaxWait time.Duration
	// MaxBackoff caps the wait before an unreachable endpoint, or a
	// throttled one that gave no Retry-After, is tried again (default
	// 30s): how soon a recovered endpoint is seen.
	MaxBackoff time.Duration
	// Base sends the requests (nil: http.DefaultTransport).
	Base http.RoundTripper
	// Clock paces and times the pool (nil: the wall clock).
	Clock clock.Clock
	Log   *slog.Logger
}

// Pool is a network's endpoints. It is safe for concurrent use.
type Pool struct {
	opt Options
	clk clock.Clock
	log *slog.Logger

	mu   sync.Mutex
	eps  []*endpoint
	best int64 // the highest head any endpoint proved
	// scanning is the endpoint the scanner's last read went to.
	scanning string
}

// endpoint is one endpoint's configuration and state, guarded by Pool.mu.
type endpoint struct {
	spec       Spec
	target     *url.URL // without user info
	user, pass string

	head        int64
	headAt      time.Time // when a head was last observed
	behindSince time.Time // zero: within the lag bound
	backwards   int64     // heads that went backwards, ignored

	wrongChain string // what the identity check found; "" is the right chain

	throttledUntil time.Time
	throttleRun    int // throttles in a row
	throttles      int64

	failures         int // failures in a row
	unreachableUntil time.Time
	failRate         float64 // EWMA of failure (1) and success (0)
	latency          time.Duration
	errorsTotal      int64

	tokens   float64
	tokensAt time.Time
	day      string
	usedDay  int64

	minute               time.Time // start of the minute being counted
	thisMinute, lastMin  int64
	callsTotal, inflight int64

	// verifications and disagreements are the second source's findings
	// on this endpoint's answers (CountVerification).
	verifications, disagreements int64
}

// New builds the pool of specs. An error names the endpoint, never its URL.
func New(specs []Spec, opt Options) (*Pool, error) {
	if len(specs) == 0 {
		return nil, errors.New("endpoints: no endpoint")
	}
	if opt.LagGrace <= 0 {
		opt.LagGrace = 30 * time.Second
	}
	if opt.MaxWait <= 0 {
		opt.MaxWait = 15 * time.Second
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = 30 * time.Second
	}
	if opt.Base == nil {
		opt.Base = http.DefaultTransport
	}
	p := &Pool{opt: opt, clk: clock.Or(opt.Clock), log: logs.Or(opt.Log)}
	now := p.clk.Now()
	seen := map[string]bool{}
	for _, s := range specs {
		if s.Name == "" || seen[s.Name] {
			return nil, fmt.Errorf("endpoints: endpoint name %q empty or used twice", s.Name)
		}
		seen[s.Name] = true
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("endpoints: endpoint %s: the url is not an http(s) URL", s.Name)
		}
		e := &endpoint{spec: s, tokens: float64(max(s.Burst, 1)), tokensAt: now}
		if u.User != nil {
			e.user = u.User.Username()
			e.pass, _ = u.User.Password()
		}
		u.User = nil
		u.Path = strings.TrimRight(u.Path, "/")
		e.target = u
		p.eps = append(p.eps, e)
	}
	return p, nil
}

// Names returns the endpoints' names in configured order.
func (p *Pool) Names() []string {
	out := make([]string, len(p.eps))
	for i, e := range p.eps {
		out[i] = e.spec.Name
	}
	return out
}

// find returns the endpoint named name, or nil.
func (p *Pool) find(name string) *endpoint {
	for _, e := range p.eps {
		if e.spec.Name == name {
			return e
		}
	}
	return nil
}

// observeHead records that endpoint name answered head h. A head below the
// one it showed before is ignored (a load balancer's stale backend, a
// rewound node): the best head only rises.
func (p *Pool) observeHead(name string, h int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.find(name)
	if e == nil {
		return
	}
	e.headAt = p.clk.Now()
	if h < e.head {
		e.backwards++
		return
	}
	e.head = h
	if h > p.best {
		p.best = h
	}
	p.updateLagLocked(p.clk.Now())
}

// headSeenWithin reports whether endpoint name answered a head within d:
// its probe may skip asking again (the scanner's tip reads count).
func (p *Pool) headSeenWithin(name string, d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.find(name)
	return e != nil && !e.headAt.IsZero() && p.clk.Now().Sub(e.headAt) < d
}

// updateLagLocked starts or clears each endpoint's time behind the best
// head.
func (p *Pool) updateLagLocked(now time.Time) {
	for _, e := range p.eps {
		if p.best-e.head > p.opt.MaxLagBlocks {
			if e.behindSince.IsZero() {
				e.behindSince = now
			}
		} else {
			e.behindSince = time.Time{}
		}
	}
}

// setWrongChain records the identity check of endpoint name: what it runs
// when that is not the configured chain, "" when it is.
func (p *Pool) setWrongChain(name, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.find(name); e != nil {
		if what != "" && e.wrongChain == "" {
			p.log.Error("endpoint is on another chain than configured: not used", "network", p.opt.Network, "endpoint", name, "runs", what)
		}
		e.wrongChain = what
	}
}

// stateLocked is e's state at now.
func (p *Pool) stateLocked(e *endpoint, now time.Time) State {
	switch {
	case e.wrongChain != "":
		return WrongChain
	case now.Before(e.throttledUntil):
		return Throttled
	case e.failures > 0:
		return Unreachable
	case e.spec.DailyBudget > 0 && e.day == day(now) && e.usedDay >= e.spec.DailyBudget:
		return OverBudget
	case !e.behindSince.IsZero() && now.Sub(e.behindSince) >= p.opt.LagGrace:
		return Lagging
	}
	return Healthy
}

// day is the UTC day of t, the daily budget's period.
func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// refillLocked adds the tokens earned since the bucket was last filled.
func (e *endpoint) refillLocked(now time.Time) {
	if e.spec.RatePerSecond <= 0 {
		return
	}
	if d := now.Sub(e.tokensAt); d > 0 {
		e.tokens = math.Min(float64(max(e.spec.Burst, 1)), e.tokens+d.Seconds()*e.spec.RatePerSecond)
	}
	e.tokensAt = now
}

// tokenWaitLocked is how long until e has a token (0: now).
func (e *endpoint) tokenWaitLocked(now time.Time) time.Duration {
	if e.spec.RatePerSecond <= 0 {
		return 0
	}
	e.refillLocked(now)
	if e.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - e.tokens) / e.spec.RatePerSecond * float64(time.Second)))
}

// takeLocked spends a token and a unit of the day's budget for a request
// to e at now.
func (e *endpoint) takeLocked(now time.Time) {
	if e.spec.RatePerSecond > 0 {
		e.tokens--
	}
	if d := day(now); d != e.day {
		e.day, e.usedDay = d, 0
	}
	e.usedDay++
	m := now.Truncate(time.Minute)
	switch {
	case m.Equal(e.minute):
	case m.Sub(e.minute) == time.Minute:
		e.minute, e.lastMin, e.thisMinute = m, e.thisMinute, 0
	default:
		e.minute, e.lastMin, e.thisMinute = m, 0, 0
	}
	e.thisMinute++
	e.callsTotal++
	e.inflight++
}

// choice is pick's answer: an endpoint to send to now, or how long until
// one may be (wait), or neither (none can serve).
type choice struct {
	e    *endpoint
	wait time.Duration
	why  string
}

// ask is what a request asks of pick.
type ask struct {
	// pinned is the endpoint the request must go to ("": any).
	pinned  string
	minHead int64
	// scan: the scanner's transport (endpoints of role verify only serve
	// probes, verifications and second looks).
	scan, probe bool
	// verify: a second source's read, never to avoid (Verify).
	verify bool
	avoid  string
	// elsewhere: another endpoint than the scanner's first (Elsewhere).
	elsewhere bool
	exclude   map[string]bool
}

// pick chooses the endpoint of a request: the pinned one when pinned,
// else the best usable one with a token, skipping excluded ones and,
// when minHead > 0, those that have not shown a head of at least minHead.
// A probe goes to its endpoint whatever its lag or chain (to see them
// change). It takes the token.
func (p *Pool) pick(q ask) choice {
	pinned, minHead, scan, probe, exclude := q.pinned, q.minHead, q.scan, q.probe, q.exclude
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	p.updateLagLocked(now)
	var cands []*endpoint
	var why []string
	for _, e := range p.eps {
		switch {
		case pinned != "" && e.spec.Name != pinned:
			continue
		case q.verify && (e.spec.Name == q.avoid || (q.avoid == "" && e.spec.Scans)):
			continue
		case scan && !probe && !q.verify && !q.elsewhere && !e.spec.Scans:
			continue
		case exclude[e.spec.Name]:
			why = append(why, e.spec.Name+" failed")
			continue
		case minHead > 0 && minHead <= p.best && e.head < minHead:
			// Some endpoint showed the height and this one has not: its
			// "not found" would not mean the block is not there. (Above
			// the best head, "not found" is the truth the caller expects.)
			why = append(why, fmt.Sprintf("%s has not shown height %d", e.spec.Name, minHead))
			continue
		}
		cands = append(cands, e)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if q.elsewhere {
			// The scanner's endpoint last, one of role verify first.
			if sa, sb := a.spec.Name == p.scanning, b.spec.Name == p.scanning; sa != sb {
				return sb
			}
		}
		if q.verify || q.elsewhere {
			if a.spec.Scans != b.spec.Scans {
				return b.spec.Scans
			}
		}
		// An endpoint behind the best head by more than the bound is
		// asked last even before its grace time is up (when it is
		// lagging, not at all): a tip read goes to an endpoint at the
		// best head.
		if ba, bb := p.best-a.head > p.opt.MaxLagBlocks, p.best-b.head > p.opt.MaxLagBlocks; ba != bb {
			return bb
		}
		if a.spec.Priority != b.spec.Priority {
			return a.spec.Priority < b.spec.Priority
		}
		// Recent success first, in steps of a tenth so latency decides
		// between endpoints that both mostly answer.
		if fa, fb := math.Round(a.failRate*10), math.Round(b.failRate*10); fa != fb {
			return fa < fb
		}
		return a.latency < b.latency
	})
	wait := time.Duration(-1)
	later := func(d time.Duration) {
		if d > 0 && (wait < 0 || d < wait) {
			wait = d
		}
	}
	for _, e := range cands {
		st := p.stateLocked(e, now)
		switch st {
		case WrongChain, Lagging:
			if probe {
				break
			}
			why = append(why, e.spec.Name+" "+string(st))
			continue
		case OverBudget:
			why = append(why, e.spec.Name+" "+string(st))
			later(now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now))
			continue
		case Throttled:
			why = append(why, e.spec.Name+" "+string(st))
			later(e.throttledUntil.Sub(now))
			continue
		case Unreachable:
			if now.Before(e.unreachableUntil) {
				why = append(why, e.spec.Name+" "+string(st))
				later(e.unreachableUntil.Sub(now))
				continue
			}
		}
		if d := e.tokenWaitLocked(now); d > 0 {
			why = append(why, e.spec.Name+" paced")
			later(d)
			continue
		}
		e.takeLocked(now)
		if scan && !probe && !q.verify && !q.elsewhere {
			p.scanning = e.spec.Name
		}
		return choice{e: e}
	}
	if wait < 0 {
		wait = 0
	}
	return choice{wait: wait, why: strings.Join(why, ", ")}
}

// succeeded records an answer of e that took took.
func (p *Pool) succeeded(e *endpoint, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.inflight--
	if e.failures > 0 {
		p.log.Info("endpoint answers again", "network", p.opt.Network, "endpoint", e.spec.Name)
	}
	e.failures, e.throttleRun = 0, 0
	e.unreachableUntil = time.Time{}
	e.failRate *= 0.8
	if e.latency == 0 {
		e.latency = took
	} else {
		e.latency = (e.latency*4 + took) / 5
	}
}

// failed records a connection error or gateway failure of e: it is
// retried after a backoff that doubles up to Options.MaxBackoff.
func (p *Pool) failed(e *endpoint, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.inflight--
	e.failures++
	e.errorsTotal++
	e.failRate = e.failRate*0.8 + 0.2
	backoff := min(p.opt.MaxBackoff, 500*time.Millisecond<<min(e.failures-1, 10))
	e.unreachableUntil = p.clk.Now().Add(backoff)
	if e.failures == 1 {
		p.log.Warn("endpoint unreachable", "network", p.opt.Network, "endpoint", e.spec.Name, "err", why)
	}
}

// refuse records that endpoint name, having shown a head of at least
// height, answered a read of that block as if it lacked it (counted with
// its errors). It reports false, recording nothing, when the endpoint
// never showed the height or no other endpoint (none of refused) did:
// then there is nowhere else to ask, and the answer stands.
func (p *Pool) refuse(name string, height int64, refused map[string]bool, why string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.find(name)
	if e == nil || e.head < height {
		return false
	}
	other := false
	for _, o := range p.eps {
		if o != e && !refused[o.spec.Name] && o.spec.Scans && o.head >= height && o.wrongChain == "" {
			other = true
		}
	}
	if !other {
		return false
	}
	e.errorsTotal++
	e.failRate = e.failRate*0.8 + 0.2
	p.log.Warn("endpoint answered as if it lacked a block it showed: asking another", "network", p.opt.Network, "endpoint", name, "height", height, "why", why)
	return true
}

// throttled records a rate-limit answer of e: it is not used until
// retryAfter has passed (when the answer said), else for a backoff that
// doubles from 1s up to Options.MaxBackoff. Throttled is not down.
func (p *Pool) throttled(e *endpoint, retryAfter time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.inflight--
	e.throttles++
	e.throttleRun++
	d := retryAfter
	if d <= 0 {
		d = min(p.opt.MaxBackoff, time.Second<<min(e.throttleRun-1, 10))
	}
	d = min(d, 10*time.Minute)
	e.throttledUntil = p.clk.Now().Add(d)
	if e.throttleRun == 1 {
		p.log.Warn("endpoint throttles: backing off", "network", p.opt.Network, "endpoint", e.spec.Name, "for", d)
	}
}

// Status is one endpoint in the status answer: never its URL or headers.
type Status struct {
	Name     string `json:"name"`
	State    State  `json:"state"`
	Priority int    `json:"priority"`
	Scans    bool   `json:"scans"`
	Head     int64  `json:"head"`
	// Lag is how far its head is behind the best head of the pool.
	Lag            int64   `json:"lag"`
	LatencyMillis  int64   `json:"latency_ms"`
	Throttles      int64   `json:"throttles"`
	Errors         int64   `json:"errors"`
	CallsPerMinute int64   `json:"calls_per_minute"`
	Calls          int64   `json:"calls"`
	BudgetUsed     int64   `json:"budget_used"`
	DailyBudget    int64   `json:"daily_budget,omitempty"`
	BudgetShare    float64 `json:"budget_share,omitempty"`
	HeadBackwards  int64   `json:"head_backwards"`
	WrongChain     string  `json:"wrong_chain,omitempty"`
	// Verifications and Disagreements are the large payments this
	// endpoint, as the second source, confirmed or showed otherwise than
	// the scan (issue 33 item 5).
	Verifications int64 `json:"verifications,omitempty"`
	Disagreements int64 `json:"disagreements,omitempty"`
}

// Status returns each endpoint's state in configured order.
func (p *Pool) Status() []Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	p.updateLagLocked(now)
	out := make([]Status, 0, len(p.eps))
	for _, e := range p.eps {
		s := Status{Name: e.spec.Name, State: p.stateLocked(e, now), Priority: e.spec.Priority, Scans: e.spec.Scans,
			Head: e.head, Lag: p.best - e.head, LatencyMillis: e.latency.Milliseconds(), Throttles: e.throttles,
			Errors: e.errorsTotal, Calls: e.callsTotal, DailyBudget: e.spec.DailyBudget, HeadBackwards: e.backwards, WrongChain: e.wrongChain,
			Verifications: e.verifications, Disagreements: e.disagreements}
		m := now.Truncate(time.Minute)
		switch {
		case m.Equal(e.minute):
			s.CallsPerMinute = e.lastMin
		case m.Sub(e.minute) == time.Minute:
			s.CallsPerMinute = e.thisMinute
		}
		if e.day == day(now) {
			s.BudgetUsed = e.usedDay
		}
		if e.spec.DailyBudget > 0 {
			s.BudgetShare = float64(s.BudgetUsed) / float64(e.spec.DailyBudget)
		}
		out = append(out, s)
	}
	return out
}

// Serving reports whether some scanning endpoint can serve within its lag
// bound now (healthy, or throttled or paced: those are slowed, not down).
// New intents are refused only when none can.
func (p *Pool) Serving() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	p.updateLagLocked(now)
	for _, e := range p.eps {
		if !e.spec.Scans {
			continue
		}
		switch p.stateLocked(e, now) {
		case Healthy, Throttled:
			return true
		}
	}
	return false
}

// CountVerification records a second source's finding by endpoint name:
// it confirmed a transfer (agrees) or showed it otherwise than the scan.
func (p *Pool) CountVerification(name string, agrees bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.find(name); e != nil {
		if agrees {
			e.verifications++
		} else {
			e.disagreements++
		}
	}
}

// Verifiers returns the names of the endpoints that may verify a block the
// endpoint named scannedBy served (Verify's choice: another name; role
// verify only when scannedBy is ""), whatever their state now.
func (p *Pool) Verifiers(scannedBy string) []string {
	var out []string
	for _, e := range p.eps {
		if e.spec.Name != scannedBy && (scannedBy != "" || !e.spec.Scans) {
			out = append(out, e.spec.Name)
		}
	}
	return out
}

// Best returns the highest head any endpoint proved.
func (p *Pool) Best() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.best
}
