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
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/store"
)

// SignatureHeader carries the delivery's signature:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>".
const SignatureHeader = "Paywatch-Signature"

// maxBatchTime bounds how long one transaction keeps delivering a batch.
const maxBatchTime = 2 * time.Second

// DefaultGiveUpAfter is how long an event is retried before it is marked
// failed and the endpoint moves on (at least 3 days, API.md).
const DefaultGiveUpAfter = 72 * time.Hour

// ErrNoSecret is returned by FromConfig when an endpoint's secret variable
// is unset or empty.
var ErrNoSecret = errors.New("webhook secret is not set")

// ErrBadSignature is returned by Verify for a missing, malformed, stale or
// wrong signature.
var ErrBadSignature = errors.New("bad webhook signature")

// Endpoint is one configured receiver.
type Endpoint struct {
	Name string
	URL  string
	// Secret signs every delivery; it is never logged.
	Secret []byte
	// Events filters event types; empty means every event.
	Events []string
	// StartNow makes a new endpoint start after the newest event instead of
	// receiving the whole history (config `start: now`).
	StartNow bool
}

// FromConfig builds the endpoints of the config, reading each secret from
// the environment variable it names (getenv is os.Getenv in the daemon).
func FromConfig(hooks []config.Webhook, getenv func(string) string) ([]Endpoint, error) {
	out := make([]Endpoint, 0, len(hooks))
	for _, h := range hooks {
		secret := getenv(h.SecretEnv)
		if secret == "" {
			return nil, fmt.Errorf("webhook %s: %w: set the environment variable %s", h.Name, ErrNoSecret, h.SecretEnv)
		}
		out = append(out, Endpoint{Name: h.Name, URL: h.URL, Secret: []byte(secret), Events: h.Events, StartNow: h.Start == "now"})
	}
	return out, nil
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
	// Batch is how many events one transaction delivers at most (default 32).
	Batch int
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
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
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
	return &Sender{ep: ep, opt: opt, clock: clock.Or(opt.Clock),
		retry:     clock.Backoff{Min: opt.MinBackoff, Max: opt.MaxBackoff, Jitter: 0.5},
		stepRetry: clock.Backoff{Min: time.Second, Max: time.Minute, Jitter: 0.5},
		log:       opt.Log.With("component", "webhooks", "endpoint", ep.Name)}
}

// Run delivers until ctx ends. It is woken by NOTIFY on the events channel
// and polls every Options.Poll.
func (s *Sender) Run(ctx context.Context) error {
	if err := s.opt.Store.EnsureWebhookEndpoint(ctx, s.ep.Name, s.ep.URL, s.ep.StartNow, s.clock.Now().UTC()); err != nil {
		return fmt.Errorf("webhook %s: %w", s.ep.Name, err)
	}
	var sub *store.Subscription
	for sub == nil {
		sctx, cancel := context.WithTimeout(ctx, s.opt.Poll)
		sub, _ = s.opt.Store.Notifier().Subscribe(sctx)
		cancel()
		if ctx.Err() != nil {
			return nil
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

// Step delivers what is due in one transaction holding the endpoint's row
// (SELECT … FOR UPDATE SKIP LOCKED, so two senders never deliver one
// endpoint at once): up to Options.Batch events in seq order, each logged
// in webhook_attempts with the cursor moved past it in the same
// transaction. It stops at the first failure, which schedules a retry with
// backoff, or, once the event has failed for GiveUpAfter, marks it failed
// and moves on. It returns how long to wait before the next step: 0 when
// more may be due now.
func (s *Sender) Step(ctx context.Context) (time.Duration, error) {
	var wait time.Duration
	err := s.opt.Store.InTx(ctx, func(tx *store.Tx) error {
		wait = 0
		ep, err := tx.LockEndpoint(ctx, s.ep.Name)
		if errors.Is(err, store.ErrEndpointBusy) {
			wait = s.opt.Poll
			return nil
		}
		if err != nil {
			return err
		}
		now := s.clock.Now().UTC()
		if ep.NextAttemptAt != nil && now.Before(*ep.NextAttemptAt) {
			wait = ep.NextAttemptAt.Sub(now)
			return nil
		}
		evs, err := tx.NextEvents(ctx, ep.LastSeq, s.ep.Events, s.opt.Batch)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			wait = s.opt.Poll
			return nil
		}
		for i, ev := range evs {
			if i > 0 && s.clock.Now().Sub(now) > maxBatchTime {
				break // keep the transaction (and the row lock) short
			}
			ok, err := s.deliverOne(ctx, tx, &ep, ev)
			if err != nil {
				return err
			}
			if !ok {
				if ep.NextAttemptAt != nil {
					wait = max(time.Millisecond, ep.NextAttemptAt.Sub(now))
				}
				break
			}
		}
		return tx.SaveEndpoint(ctx, ep)
	})
	return wait, err
}

// deliverOne posts ev and records the outcome in ep and the log; ok is
// false when the endpoint must wait for a retry.
func (s *Sender) deliverOne(ctx context.Context, tx *store.Tx, ep *store.WebhookEndpoint, ev store.Event) (bool, error) {
	body, err := json.Marshal(intents.EventViewOf(ev))
	if err != nil {
		return false, fmt.Errorf("event %d: %w", ev.Seq, err)
	}
	start := s.clock.Now()
	code, perr := s.post(ctx, ev, body)
	if ctx.Err() != nil {
		// Shutting down mid-delivery: roll back; the event is sent again.
		return false, ctx.Err()
	}
	now := s.clock.Now().UTC()
	a := store.WebhookAttempt{Endpoint: ep.Name, EventSeq: ev.Seq, EventID: ev.ID, DurationMS: int(now.Sub(start).Milliseconds()),
		Attempt: ep.Attempts + 1, CreatedAt: now}
	if code != 0 {
		a.StatusCode = &code
	}
	if perr == nil {
		a.Outcome = "delivered"
		ep.LastSeq, ep.Attempts, ep.NextAttemptAt, ep.FirstFailedAt, ep.LastError = ev.Seq, 0, nil, nil, ""
	} else {
		a.Error = perr.Error()
		first := now
		if ep.FirstFailedAt != nil {
			first = *ep.FirstFailedAt
		}
		if now.Sub(first) >= s.opt.GiveUpAfter {
			a.Outcome = "failed"
			a.Error = fmt.Sprintf("gave up after %d attempts over %s: %s; redeliver with `paywatch webhooks redeliver --endpoint %s --from-seq %d`",
				a.Attempt, now.Sub(first).Round(time.Second), perr, ep.Name, ev.Seq)
			s.log.Error("webhook event failed for good; the endpoint moves on", "event", ev.ID, "seq", ev.Seq, "attempts", a.Attempt, "err", perr)
			ep.LastSeq, ep.Attempts, ep.NextAttemptAt, ep.FirstFailedAt, ep.LastError = ev.Seq, 0, nil, nil, a.Error
		} else {
			a.Outcome = "retry"
			next := now.Add(s.retry.Delay(a.Attempt))
			ep.Attempts, ep.NextAttemptAt, ep.FirstFailedAt, ep.LastError = a.Attempt, &next, &first, a.Error
			s.log.Warn("webhook delivery failed; will retry", "event", ev.ID, "seq", ev.Seq, "attempt", a.Attempt, "next", next, "err", perr)
		}
	}
	ep.UpdatedAt = now
	if err := tx.LogAttempt(ctx, a); err != nil {
		return false, err
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
	req.Header.Set(SignatureHeader, "t="+strconv.FormatInt(t, 10)+",v1="+Sign(s.ep.Secret, t, body))
	resp, err := s.opt.Client.Do(req)
	if err != nil {
		return 0, err
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
// away from now (5 minutes in API.md).
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
