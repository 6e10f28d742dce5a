package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// SignatureHeader carries the delivery's signature:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>".
const SignatureHeader = "Paywatch-Signature"

// maxBatchTime bounds how long one claim keeps delivering a batch.
const maxBatchTime = 2 * time.Second

// DefaultClaimFor is how long a sender's claim on an endpoint lasts: three
// times the default POST timeout, so a POST is never cut short by its
// claim, and a crashed sender's events are taken over within it (plus
// Options.Poll).
const DefaultClaimFor = 30 * time.Second

// DefaultGiveUpAfter is how long an event is retried before it is marked
// failed and the endpoint moves on (at least 3 days, so a receiver down over a weekend misses nothing).
const DefaultGiveUpAfter = 72 * time.Hour

// ErrNoSecret is returned by FromConfig when an endpoint's secret variable
// is unset or empty.
var ErrNoSecret = errors.New("webhook secret is not set")

// ErrWeakSecret is returned by FromConfig for a secret shorter than
// MinSecretBytes, or a next secret equal to the current one.
var ErrWeakSecret = errors.New("webhook secret is too weak")

// MinSecretBytes is the shortest signing secret accepted: an HMAC-SHA256
// key of 256 bits, beyond guessing.
const MinSecretBytes = 32

// ErrBadSignature is returned by Verify for a missing, malformed, stale or
// wrong signature.
var ErrBadSignature = errors.New("bad webhook signature")

// Endpoint is one configured receiver.
type Endpoint struct {
	Name string
	URL  string
	// Secret signs every delivery; it is never logged.
	Secret []byte
	// NextSecret, during a rotation, signs every delivery too: the
	// signature header then carries a v1 value under each secret, so the
	// receiver verifies with either while it switches.
	NextSecret []byte
	// Events filters event types; empty means every event.
	Events []string
	// AccountPrefix, when set, limits deliveries to the events of the
	// accounts that start with it (transfers to no account are left out).
	AccountPrefix string
	// Store, when set, limits deliveries to the events of that store.
	Store string
	// StartNow makes a new endpoint start after the newest event instead of
	// receiving the whole history (config `start: now`).
	StartNow bool
}

// FromConfig builds the endpoints of the config, reading each secret (and
// a rotation's next secret) from the environment variable it names (getenv
// is os.Getenv in the daemon). A secret must have at least MinSecretBytes;
// errors name the variable, never the secret.
func FromConfig(hooks []config.Webhook, getenv func(string) string) ([]Endpoint, error) {
	out := make([]Endpoint, 0, len(hooks))
	for _, h := range hooks {
		secret, err := readSecret(h.Name, h.SecretEnv, getenv)
		if err != nil {
			return nil, err
		}
		ep := Endpoint{Name: h.Name, URL: h.URL, Secret: secret, Events: h.Events, AccountPrefix: h.AccountPrefix, Store: h.Store, StartNow: h.Start == "now"}
		if h.NextSecretEnv != "" {
			if ep.NextSecret, err = readSecret(h.Name, h.NextSecretEnv, getenv); err != nil {
				return nil, err
			}
			if hmac.Equal(ep.NextSecret, ep.Secret) {
				return nil, fmt.Errorf("webhook %s: %w: %s holds the same secret as %s; a rotation needs a new one",
					h.Name, ErrWeakSecret, h.NextSecretEnv, h.SecretEnv)
			}
		}
		out = append(out, ep)
	}
	return out, nil
}

// readSecret reads an endpoint's secret from the variable env.
func readSecret(name, env string, getenv func(string) string) ([]byte, error) {
	secret := getenv(env)
	if secret == "" {
		return nil, fmt.Errorf("webhook %s: %w: set the environment variable %s", name, ErrNoSecret, env)
	}
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("webhook %s: %w: %s holds %d bytes, at least %d are needed (for example `openssl rand -hex 32`)",
			name, ErrWeakSecret, env, len(secret), MinSecretBytes)
	}
	return []byte(secret), nil
}

// Options tunes a Sender; zero values take the defaults.
type Options struct {
	Store *store.Store
	// Client posts the deliveries (default: 10 s timeout, no redirects).
	Client *http.Client
	Log    *slog.Logger
	// Clock stamps signatures, schedules retries and times the waits
	// (default clock.Real).
	Clock clock.Clock
	// MinBackoff is the first retry delay (default 5 s); each failure
	// doubles it up to MaxBackoff (default 1 h), with jitter.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// GiveUpAfter is how long one event is retried (default 72 h).
	GiveUpAfter time.Duration
	// Poll re-checks the endpoint without a notification (default 5 s):
	// a standby instance takes over within it.
	Poll time.Duration
	// Batch is how many events one claim delivers at most (default 32).
	Batch int
	// ClaimFor is how long a claim holds the endpoint (default
	// DefaultClaimFor, 30 s): a POST is cut off when its claim ends, and a
	// crashed sender's claim is taken over after it.
	ClaimFor time.Duration
	// Delivered, when set, is told each event the endpoint accepted and
	// how long after the event was recorded (a latency metric).
	Delivered func(endpoint string, after time.Duration)
}

// Sender delivers the event log to one endpoint.
type Sender struct {
	ep    Endpoint
	opt   Options
	clock clock.Clock
	// retry spaces a failing event's attempts; stepRetry spaces steps that
	// failed on the database.
	retry, stepRetry clock.Backoff
	log              *slog.Logger
}

// New returns a sender for ep.
func New(ep Endpoint, opt Options) *Sender {
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	opt.Log = logs.Or(opt.Log)
	if opt.MinBackoff <= 0 {
		opt.MinBackoff = 5 * time.Second
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = time.Hour
	}
	if opt.GiveUpAfter <= 0 {
		opt.GiveUpAfter = DefaultGiveUpAfter
	}
	if opt.Poll <= 0 {
		opt.Poll = 5 * time.Second
	}
	if opt.Batch <= 0 {
		opt.Batch = 32
	}
	if opt.ClaimFor <= 0 {
		opt.ClaimFor = DefaultClaimFor
	}
	return &Sender{ep: ep, opt: opt, clock: clock.Or(opt.Clock),
		retry:     clock.Backoff{Min: opt.MinBackoff, Max: opt.MaxBackoff, Jitter: 0.5},
		stepRetry: clock.Backoff{Min: time.Second, Max: time.Minute, Jitter: 0.5},
		log:       opt.Log.With("component", "webhooks", "endpoint", ep.Name)}
}

// Run delivers until ctx ends. It is woken by NOTIFY on the events channel
// and polls every Options.Poll.
func (s *Sender) Run(ctx context.Context) error {
	if s.ep.Store != "" {
		// The daemon creates the config's stores before its senders start;
		// a store named nowhere is a mistake to say, not to deliver around.
		if _, err := s.opt.Store.Shop(ctx, s.ep.Store); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("webhook %s: store %q does not exist: declare it under stores in the config or create it, then restart", s.ep.Name, s.ep.Store)
		} else if err != nil {
			return fmt.Errorf("webhook %s: %w", s.ep.Name, err)
		}
	}
	// The database keeps the URL redacted: the API, the console and the
	// CLI show it, and a credential there would be shown too.
	if err := s.opt.Store.EnsureWebhookEndpoint(ctx, s.ep.Name, RedactURL(s.ep.URL), s.ep.Store, s.ep.StartNow, s.clock.Now().UTC()); err != nil {
		return fmt.Errorf("webhook %s: %w", s.ep.Name, err)
	}
	var sub *store.Subscription
	for sub == nil {
		sctx, cancel := context.WithTimeout(ctx, s.opt.Poll)
		var err error
		sub, err = s.opt.Store.Notifier().Subscribe(sctx)
		cancel()
		if ctx.Err() != nil || errors.Is(err, store.ErrStopped) {
			return nil // shutting down
		}
	}
	defer sub.Close()
	failures := 0
	for {
		wait, err := s.Step(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			s.log.Warn("webhook delivery step failed", "err", err)
			failures++
			wait = s.stepRetry.Delay(failures)
		} else {
			failures = 0
		}
		if wait == 0 {
			continue
		}
		t := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-sub.C:
		case <-t.C:
		}
		t.Stop()
	}
}

// Step delivers what is due, with no transaction open while it POSTs: it
// claims up to Options.Batch events of the endpoint (committed, expiring
// after Options.ClaimFor), POSTs them one at a time in seq order, and
// records each attempt in its own transaction, which moves the cursor past
// a delivered event and keeps or releases the claim. It stops at the first
// failure, which schedules a retry with backoff, or, once the event has
// failed for GiveUpAfter, marks it failed and moves on. A crash between a
// POST and its record leaves the claim to expire: the event is sent again
// (at least once), never skipped. Step returns how long to wait before the
// next step: 0 when more may be due now.
func (s *Sender) Step(ctx context.Context) (time.Duration, error) {
	now := s.clock.Now().UTC()
	c, out, err := s.opt.Store.ClaimWebhookEvents(ctx, s.ep.Name, s.ep.Events, s.ep.AccountPrefix, s.ep.Store, s.opt.Batch, s.opt.ClaimFor, now)
	if err != nil {
		return 0, err
	}
	switch out {
	case store.ClaimBusy:
		return min(s.opt.Poll, max(time.Millisecond, c.Endpoint.ClaimedUntil.Sub(now))), nil
	case store.ClaimRetryLater:
		return max(time.Millisecond, c.Endpoint.NextAttemptAt.Sub(now)), nil
	case store.ClaimNothingDue:
		return s.opt.Poll, nil
	}
	ep := c.Endpoint
	for i, ev := range c.Events {
		more := i+1 < len(c.Events) && s.clock.Now().Sub(now) <= maxBatchTime // keep a claim short
		ok, err := s.deliverOne(ctx, c.Token, &ep, ev, more)
		if errors.Is(err, store.ErrClaimLost) {
			s.log.Info("webhook claim was taken over; its holder delivers on", "event", ev.ID, "seq", ev.Seq)
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if !ok {
			return max(time.Millisecond, ep.NextAttemptAt.Sub(s.clock.Now().UTC())), nil
		}
		if s.opt.Delivered != nil {
			s.opt.Delivered(s.ep.Name, s.clock.Now().Sub(ev.CreatedAt))
		}
		if ep.ClaimToken == "" {
			break // the record released the claim
		}
	}
	return 0, nil
}

// recordTimeout bounds recording an attempt, or releasing a claim, once
// the POST was made: that work outlives a shutdown's cancellation.
const recordTimeout = 5 * time.Second

// deliverOne POSTs ev under the claim token and records the outcome in ep
// and the log; ok is false when the endpoint must wait for a retry. With
// more, a delivered event keeps the claim for the next one; otherwise the
// record releases it.
func (s *Sender) deliverOne(ctx context.Context, token string, ep *store.WebhookEndpoint, ev store.Event, more bool) (bool, error) {
	body, err := json.Marshal(views.StorefrontEventOf(ev))
	if err != nil {
		return false, fmt.Errorf("event %d: %w", ev.Seq, err)
	}
	bg := context.WithoutCancel(ctx)
	start := s.clock.Now()
	// The POST ends before the claim does, so no other sender POSTs the
	// endpoint while it is in flight.
	pctx, cancel := context.WithTimeout(ctx, ep.ClaimedUntil.Sub(start))
	code, perr := s.post(pctx, ev, body)
	cancel()
	if ctx.Err() != nil {
		// Shutting down mid-delivery: nothing is recorded and the claim is
		// released, so the next sender sends the event again at once.
		rctx, cancel := context.WithTimeout(bg, recordTimeout)
		defer cancel()
		if err := s.opt.Store.ReleaseWebhookClaim(rctx, ep.Name, token); err != nil {
			s.log.Warn("releasing the webhook claim at shutdown failed; it expires", "err", err)
		}
		return false, ctx.Err()
	}
	now := s.clock.Now().UTC()
	a := store.WebhookAttempt{Endpoint: ep.Name, EventSeq: ev.Seq, EventID: ev.ID, DurationMS: int(now.Sub(start).Milliseconds()),
		Attempt: ep.Attempts + 1, CreatedAt: now}
	if code != 0 {
		a.StatusCode = &code
	}
	var logAfter func()
	if perr == nil {
		a.Outcome = "delivered"
		ep.LastSeq, ep.Attempts, ep.NextAttemptAt, ep.FirstFailedAt, ep.LastError = ev.Seq, 0, nil, nil, ""
	} else {
		more = false
		a.Error = perr.Error()
		first := now
		if ep.FirstFailedAt != nil {
			first = *ep.FirstFailedAt
		}
		if now.Sub(first) >= s.opt.GiveUpAfter {
			a.Outcome = "failed"
			a.Error = fmt.Sprintf("gave up after %d attempts over %s: %s; redeliver with `paywatch webhooks redeliver --endpoint %s --from-seq %d`",
				a.Attempt, now.Sub(first).Round(time.Second), perr, ep.Name, ev.Seq)
			logAfter = func() {
				s.log.Error("webhook event failed for good; the endpoint moves on", "event", ev.ID, "seq", ev.Seq, "attempts", a.Attempt, "err", perr)
			}
			ep.LastSeq, ep.Attempts, ep.NextAttemptAt, ep.FirstFailedAt, ep.LastError = ev.Seq, 0, nil, nil, a.Error
			perr = nil // the endpoint moves on now
		} else {
			a.Outcome = "retry"
			next := now.Add(s.retry.Delay(a.Attempt))
			ep.Attempts, ep.NextAttemptAt, ep.FirstFailedAt, ep.LastError = a.Attempt, &next, &first, a.Error
			logAfter = func() {
				s.log.Warn("webhook delivery failed; will retry", "event", ev.ID, "seq", ev.Seq, "attempt", a.Attempt, "next", next, "err", a.Error)
			}
		}
	}
	ep.UpdatedAt = now
	if more {
		until := now.Add(s.opt.ClaimFor)
		ep.ClaimedUntil = &until
	} else {
		ep.ClaimToken, ep.ClaimedUntil = "", nil
	}
	rctx, rcancel := context.WithTimeout(bg, recordTimeout)
	defer rcancel()
	if err := s.opt.Store.RecordAttempt(rctx, token, *ep, a); err != nil {
		return false, err
	}
	if logAfter != nil {
		logAfter() // after commit: the record's transaction may be retried
	}
	return perr == nil, nil
}

// post sends one event; a non-2xx answer is an error.
func (s *Sender) post(ctx context.Context, ev store.Event, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.ep.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	t := s.clock.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paywatch-webhooks/1")
	req.Header.Set("Paywatch-Event-Id", ev.ID)
	sig := "t=" + strconv.FormatInt(t, 10) + ",v1=" + Sign(s.ep.Secret, t, body)
	if len(s.ep.NextSecret) > 0 {
		sig += ",v1=" + Sign(s.ep.NextSecret, t, body)
	}
	req.Header.Set(SignatureHeader, sig)
	resp, err := s.opt.Client.Do(req)
	if err != nil {
		// net/http names the URL in its errors (password masked, query
		// kept): the text goes to the delivery log, the API and the logs.
		return 0, newRedactError(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// Sign returns the hex HMAC-SHA256 of "<t>.<body>" under secret.
func Sign(secret []byte, t int64, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strconv.FormatInt(t, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a Paywatch-Signature header as a receiver must: a v1
// signature of "<t>.<body>" under secret, with t no more than tolerance
// away from now (5 minutes in docs/integrating.md, "Webhook secrets and URLs").
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var t int64 = -1
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: bad timestamp", ErrBadSignature)
			}
			t = n
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if t < 0 || len(sigs) == 0 {
		return fmt.Errorf("%w: missing t or v1", ErrBadSignature)
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp %d is %s away from now", ErrBadSignature, t, d.Round(time.Second))
	}
	want := Sign(secret, t, body)
	for _, sig := range sigs {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature matches", ErrBadSignature)
}
