package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/clientaddr"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Scopes of API keys.
const (
	ScopeStorefront = store.ScopeStorefront
	ScopeFinance    = "finance"
	ScopeOperator   = "operator"
	// The storefront's finer scopes (storefront grants all three).
	ScopeRead    = store.ScopeRead
	ScopeIntents = store.ScopeIntents
	ScopeDebit   = store.ScopeDebit
)

// NetworkStatus is one network in GET /v1/status.
type NetworkStatus = availability.NetworkStatus

// Status reports per-network health for /v1/status and /v1/methods.
type Status interface {
	Networks(ctx context.Context) ([]NetworkStatus, error)
}

// Server is the HTTP API.
type Server struct {
	svc     *intents.Service
	finance *finance.Service
	reports *reports.Service
	store   Reader
	cfg     *config.Config
	status  Status
	log     *slog.Logger
	mux     *http.ServeMux
	metrics http.Handler
	keys    keyCache
	// shops are the stores a request named that exist: a store is never
	// deleted, so one found once is not read again.
	shops   sync.Map
	proxies []netip.Prefix // trusted_proxies: who may say who the client is
	feed    *eventFeed
	creates *keyBuckets // limits of POST /v1/intents and renew per key
	table   []Route     // every mounted route (openapi.go)
	// now is the clock of rate locks, deadlines and cached answers.
	now func() time.Time

	// readyMu guards ready, the last /readyz answer, computed at most once
	// per readyFor.
	readyMu sync.Mutex
	ready   readyAnswer
}

// readyFor is how long a /readyz answer is reused: the route is
// unauthenticated, and each computation is two database round trips.
const readyFor = time.Second

// readyAnswer is a computed /readyz answer.
type readyAnswer struct {
	at     time.Time
	status int
	body   []byte
}

// Options wires a Server.
type Options struct {
	Service *intents.Service
	// Reader is what the API reads beside the services (the daemon's
	// store). Required.
	Reader  Reader
	Finance *finance.Service
	Reports *reports.Service
	Config  *config.Config
	Status  Status
	Metrics http.Handler
	Log     *slog.Logger
	// Clock is the API's clock; nil is the wall clock.
	Clock clock.Clock
	// Events is what the long-poll reader reads (default Reader), and Wake
	// what wakes it (default the LISTEN connection of Reader, when it is a
	// *store.Store).
	Events EventReader
	Wake   Waker
}

// New returns the API server with every route mounted.
func New(opt Options) *Server {
	opt.Log = logs.Or(opt.Log)
	opt.Clock = clock.Or(opt.Clock)
	if opt.Reader == nil {
		panic("api: Options.Reader is required")
	}
	s := &Server{svc: opt.Service, finance: opt.Finance, reports: opt.Reports, store: opt.Reader, cfg: opt.Config, status: opt.Status,
		log: opt.Log.With("component", "api"), mux: http.NewServeMux(), metrics: opt.Metrics, now: opt.Clock.Now,
		proxies: opt.Config.Proxies()}
	if opt.Events == nil {
		opt.Events = s.store
	}
	if opt.Wake == nil {
		if st, ok := opt.Reader.(interface{ Notifier() *store.Notifier }); ok {
			opt.Wake = NotifierWaker{N: st.Notifier()}
		}
	}
	ev := opt.Config.Events
	s.creates = &keyBuckets{perMinute: opt.Config.Limits.CreatesPerMinute, burst: opt.Config.Limits.CreateBurst}
	s.feed = newEventFeed(opt.Events, opt.Wake, ev.PollInterval.Duration, ev.MaxWaiters, ev.MaxWaitersPerKey,
		opt.Log.With("component", "events"))
	s.routes()
	return s
}

// LongPolls returns the number of event long-polls waiting now.
func (s *Server) LongPolls() int { return s.feed.Waiting() }

// ErrTooManyWaiters refuses a long-poll beyond the event feed's caps
// (events.max_waiters, events.max_waiters_per_key); GET /v1/events answers
// it with 429 rate_limited.
var ErrTooManyWaiters = errTooManyWaiters

// WaitEvents waits, as GET /v1/events?wait= does and under the same caps,
// until an event after seq exists or ctx ends (nil either way). Beyond the
// caps it fails at once with ErrTooManyWaiters. The console's live refresh
// waits here.
func (s *Server) WaitEvents(ctx context.Context, keyID string, seq int64) error {
	_, err := s.feed.Wait(ctx, keyID, "", seq, nil, 1)
	return err
}

// Run runs the reader that serves the event feed's long-polls until ctx
// ends (a clean exit, nil). Waiting requests get an empty page then.
func (s *Server) Run(ctx context.Context) error { return s.feed.Run(ctx) }

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	// Answers are JSON (or a PNG): never sniffed into something a browser
	// renders.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !cleanPath(r.URL.EscapedPath()) {
		// ServeMux would redirect to the cleaned path, with an HTML body,
		// and a POST would follow to whatever route that names.
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s: the path has empty or dot segments", r.Method, quoted(r.URL.EscapedPath())))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Handle mounts h at pattern behind scope (for routes defined elsewhere).
// h runs only after the key is checked and the request's path and query
// parameters pass the edge validation (validate.go).
func (s *Server) Handle(pattern, scope string, h func(http.ResponseWriter, *http.Request, store.APIKey)) {
	s.record(pattern, scope)
	s.mux.Handle(pattern, s.auth(scope, validated(pattern, h)))
}

func (s *Server) routes() {
	s.public("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) }))
	s.public("GET /readyz", http.HandlerFunc(s.readyz))
	if s.metrics != nil {
		s.public("GET /metrics", s.metrics)
	}
	s.public("GET /v1/openapi.json", http.HandlerFunc(s.openAPI))
	s.Handle("GET /v1/methods", ScopeRead, s.methods)
	s.Handle("POST /v1/intents", ScopeIntents, s.createIntent)
	s.Handle("GET /v1/intents/{id}", ScopeRead, s.getIntent)
	s.Handle("GET /v1/intents/{id}/qr.png", ScopeRead, s.intentQR)
	s.Handle("POST /v1/intents/{id}/report", ScopeIntents, s.reportIntent)
	s.Handle("POST /v1/intents/{id}/renew", ScopeIntents, s.renewIntent)
	s.Handle("POST /v1/payables", ScopeIntents, s.createPayable)
	s.Handle("GET /v1/payables/{kind}/{reference}", ScopeRead, s.getPayable)
	s.Handle("GET /v1/status", ScopeOperator, s.instanceOnly(s.getStatus))
	s.Handle("POST /v1/networks/{network}/rescan", ScopeOperator, s.instanceOnly(s.rescan))
	s.Handle("POST /v1/networks/{network}/reconcile", ScopeOperator, s.instanceOnly(s.reconcileNetwork))
	s.moneyRoutes()
	s.storeRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
}

// readyz answers whether the database answers with every migration
// applied. The answer is computed at most once per readyFor (by the first
// request after that; the others wait for it) and reused meanwhile.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	s.readyMu.Lock()
	now := s.now()
	if a := s.ready; a.body == nil || now.Sub(a.at) >= readyFor || now.Before(a.at) {
		status, body := s.computeReady(context.WithoutCancel(r.Context()))
		s.ready = readyAnswer{at: now, status: status, body: body}
	}
	a := s.ready
	s.readyMu.Unlock()
	writeRaw(w, a.status, a.body)
}

// computeReady pings the database and counts the pending migrations.
func (s *Server) computeReady(ctx context.Context) (int, []byte) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	fail := func(code, msg string) (int, []byte) {
		var b ErrorBody
		b.Error.Code, b.Error.Message = code, msg
		body, _ := json.Marshal(b)
		return http.StatusServiceUnavailable, body
	}
	if err := s.store.Ping(ctx); err != nil {
		return fail("database_unavailable", "the database does not answer")
	}
	pending, err := s.store.Pending(ctx)
	if err != nil || pending > 0 {
		return fail("migrations_pending", fmt.Sprintf("%d migrations are not applied: run `paywatch migrate`", pending))
	}
	return http.StatusOK, []byte(`{"status":"ready"}`)
}

type ctxKey struct{}

// auth checks the bearer key and its scope.
func (s *Server) auth(scope string, h func(http.ResponseWriter, *http.Request, store.APIKey)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plain, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || plain == "" || len(plain) > 200 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paywatch"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing API key: send Authorization: Bearer <key>")
			return
		}
		client := clientaddr.Bucket(clientaddr.Of(r, s.proxies))
		key, wait, err := s.keys.lookup(r.Context(), s.store, strings.TrimSpace(plain), s.now(), client)
		if errors.Is(err, errKeyThrottled) {
			secs := max(1, int((wait+time.Second-1)/time.Second))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf(
				"too many unknown API keys from this client (more than %d a minute); retry after %d s", unknownKeysPerWindow, secs))
			return
		}
		if errors.Is(err, store.ErrNotFound) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paywatch"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "unknown or revoked API key")
			return
		}
		if err != nil {
			s.internal(w, r, err)
			return
		}
		if !key.Grants(scope) {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("this API key lacks the %q scope", scope))
			return
		}
		if storefrontScope(scope) && !key.HasScope(ScopeFinance) {
			// Finance's internal notes stay out of what a storefront
			// key reads (views.ForStorefront).
			bw := &bufferedWriter{ResponseWriter: w}
			h(bw, r, key)
			bw.finish(views.ForStorefront)
			return
		}
		h(w, r, key)
	})
}

// creationAllowed takes a token of the key's creation bucket; false means
// a 429 with Retry-After was written.
func (s *Server) creationAllowed(w http.ResponseWriter, key store.APIKey) bool {
	ok, wait := s.creates.take(key.ID, s.now())
	if ok {
		return true
	}
	secs := max(1, int((wait+time.Second-1)/time.Second))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf(
		"this API key created intents faster than limits.creates_per_minute (%d a minute, bursts of %d); retry after %d s",
		s.creates.perMinute, s.creates.burst, secs))
	return false
}

// storefrontScope reports whether scope is one of the storefront's.
func storefrontScope(scope string) bool {
	return scope == ScopeStorefront || scope == ScopeRead || scope == ScopeIntents || scope == ScopeDebit
}

// forbidAccount answers 403 for an account outside the key's binding;
// false means it did (nothing else may be written).
func forbidAccount(w http.ResponseWriter, key store.APIKey, account string) bool {
	if key.Covers(account) {
		return true
	}
	what := "account " + quoted(account)
	if account == "" {
		what = "no account"
	}
	writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("this API key is bound to the accounts starting with %s; this is %s",
		quoted(key.AccountPrefix), what))
	return false
}

// bufferedWriter holds an answer until finish rewrites its JSON body.
type bufferedWriter struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.body = append(b.body, p...)
	return len(p), nil
}

// finish sends the answer, its JSON body passed through rewrite.
func (b *bufferedWriter) finish(rewrite func([]byte) []byte) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	body := b.body
	if strings.HasPrefix(b.Header().Get("Content-Type"), "application/json") {
		body = rewrite(body)
		if b.Header().Get("Content-Length") != "" {
			b.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
	}
	b.ResponseWriter.WriteHeader(b.status)
	_, _ = b.ResponseWriter.Write(body)
}

// ErrorBody is the api/openapi.yaml error shape.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b ErrorBody
	b.Error.Code, b.Error.Message = code, msg
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = 500, []byte(`{"error":{"code":"internal","message":"response encoding failed"}}`)
	}
	writeRaw(w, status, body)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// writeResult answers a command's result: its view with the outcome's
// status, or, for a replayed Idempotency-Key, the stored view byte for byte.
func writeResult[V any](w http.ResponseWriter, res intents.Result[V]) {
	status := StatusOfOutcome(res.Outcome)
	if res.Replayed() {
		writeRaw(w, status, res.Stored)
		return
	}
	if res.Body != nil {
		writeRaw(w, status, res.Body)
		return
	}
	writeJSON(w, status, res.View)
}

// StatusOfOutcome maps what a command did to its HTTP status: 201 when it
// created something, 200 otherwise.
func StatusOfOutcome(o intents.Outcome) int {
	if o == intents.Created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// StatusOf maps a service error kind to its HTTP status. The console
// answers with the same statuses, through this function.
func StatusOf(k intents.Kind) int {
	switch k {
	case intents.InvalidRequest, intents.InvalidAmount, intents.UnknownMethod, intents.MethodDisabled:
		return http.StatusBadRequest
	case intents.NotFound:
		return http.StatusNotFound
	case intents.Conflict, intents.AlreadyPaid, intents.InsufficientFunds, intents.IdempotencyMismatch, intents.PaymentInProgress,
		intents.TooManyOpenIntents:
		return http.StatusConflict
	case intents.RateUnavailable, intents.ChainUnavailable, intents.AddressPoolEmpty:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// nextSteps tells a caller where to look after an error of a kind, in the
// API's own routes: the core's errors say what went wrong, the API where
// to go from there.
var nextSteps = map[intents.Kind]string{
	intents.MethodDisabled: "GET /v1/methods lists the enabled ones",
}

// MessageOf is the message the API answers for a service error: the
// core's words, and the next step for its kind.
func MessageOf(e *intents.Error) string {
	if step := nextSteps[e.Kind]; step != "" {
		return e.Message + "; " + step
	}
	return e.Message
}

// fail writes a service error, or a 500 for anything unexpected.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var e *intents.Error
	if errors.As(err, &e) {
		writeError(w, StatusOf(e.Kind), string(e.Kind), MessageOf(e))
		return
	}
	if errors.Is(err, r.Context().Err()) && r.Context().Err() != nil {
		return
	}
	s.internal(w, r, err)
}

// DatabaseRetryAfter is the Retry-After of a 503 database_unavailable, in
// seconds: about the time a failover to a synchronous standby takes.
const DatabaseRetryAfter = 5

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	if store.IsUnavailable(err) {
		// The primary went away (a failover): nothing under this request's
		// Idempotency-Key was committed that a retry does not replay.
		s.log.Warn("request failed: database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		WriteDatabaseUnavailable(w)
		return
	}
	s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal", "internal error; the operator's log has the details")
}

// WriteDatabaseUnavailable answers 503 database_unavailable with
// Retry-After: the database did not answer (or only a read-only standby
// did) for longer than database.retry_for.
func WriteDatabaseUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(DatabaseRetryAfter))
	writeError(w, http.StatusServiceUnavailable, "database_unavailable",
		"the database is unavailable (a failover may be in progress); retry after Retry-After seconds with the same Idempotency-Key")
}

// readBody reads a size-limited body; false means an error was written.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body is larger than %d bytes", s.cfg.MaxBodyBytes))
			return nil, false
		}
		writeError(w, http.StatusBadRequest, "invalid_request", "could not read the request body")
		return nil, false
	}
	return body, true
}

// decodeStrict decodes JSON into v rejecting unknown fields and trailing
// data, after checkBody has checked its strings and numbers; an empty body
// decodes as {} when allowEmpty.
func decodeStrict(body []byte, v any, allowEmpty bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return errors.New("request body must be a JSON object")
	}
	if err := checkBody(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return fmt.Errorf("field %q must be a %s", ute.Field, ute.Type)
		}
		return fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return errors.New("invalid JSON: trailing data after the object")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return errors.New("invalid JSON: trailing data after the object")
	}
	return nil
}

// decode reads and decodes a JSON body; false means an error was written.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) ([]byte, bool) {
	body, ok := s.readBody(w, r)
	if !ok {
		return nil, false
	}
	if err := decodeStrict(body, v, allowEmpty); err != nil {
		writeEdge(w, err)
		return nil, false
	}
	return body, true
}

// decodeClaim decodes a POST body strictly into v and returns its
// Idempotency-Key claim (nil without the header). The claim hashes the
// decoded request re-encoded, so whitespace and field order do not make two
// requests different. false means an error was written.
func (s *Server) decodeClaim(w http.ResponseWriter, r *http.Request, key store.APIKey, v any) (*intents.Idem, bool) {
	if _, ok := s.decode(w, r, v, false); !ok {
		return nil, false
	}
	if r.Header.Get("Idempotency-Key") == "" {
		return nil, true // no claim: the request needs no canonical form
	}
	canon, err := json.Marshal(v)
	if err != nil {
		s.internal(w, r, err)
		return nil, false
	}
	claim, err := idem(r, key, canon)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return nil, false
	}
	return claim, true
}

// idem returns the request's Idempotency-Key claim, or nil.
func idem(r *http.Request, key store.APIKey, body []byte) (*intents.Idem, error) {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		return nil, nil
	}
	if err := checkText("Idempotency-Key", k, maxText, false); err != nil {
		return nil, err
	}
	hash := intents.RequestHash(r.Method, r.URL.Path, body)
	if shop := key.StoreFor(r.Header.Get(StoreHeader)); shop != store.DefaultStore {
		// The store is part of the request: an every-store key's key and
		// body sent for another store is another request, never answered
		// with the first store's response (issue 34). The default store's
		// hash is the one from before stores.
		h := sha256.New()
		h.Write(hash)
		fmt.Fprintf(h, "\nstore %s", shop)
		hash = h.Sum(nil)
	}
	return &intents.Idem{KeyID: key.ID, Key: k, Hash: hash}, nil
}

// StoreHeader names the store an every-store key acts for (absent: the
// default store). A store's own key may send it only with its own store.
const StoreHeader = "Paywatch-Store"

// shopOf is the store a request acts in: the key's own store, or for an
// every-store key the one StoreHeader names (which must exist), else the
// default store. false means an answer was written. A store's key naming
// another store is refused without saying anything of that store.
func (s *Server) shopOf(w http.ResponseWriter, r *http.Request, key store.APIKey) (string, bool) {
	asked := r.Header.Get(StoreHeader)
	if key.Store != "" {
		if asked != "" && asked != key.Store {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("this API key belongs to store %s; it acts for that store only", quoted(key.Store)))
			return "", false
		}
		return key.Store, true
	}
	if asked == "" {
		return store.DefaultStore, true
	}
	if !store.ValidStoreID(asked) {
		writeError(w, http.StatusBadRequest, "invalid_request", StoreHeader+" must be a store id: 1 to 40 of a-z, 0-9, - and _")
		return "", false
	}
	if _, ok := s.shops.Load(asked); ok {
		return asked, true
	}
	if _, err := s.store.Shop(r.Context(), asked); errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", "no store "+quoted(asked))
		return "", false
	} else if err != nil {
		s.internal(w, r, err)
		return "", false
	}
	s.shops.Store(asked, true)
	return asked, true
}
