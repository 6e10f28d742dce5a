package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/clientaddr"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
)

// Scopes of API keys: the API's.
const (
	ScopeStorefront = api.ScopeStorefront
	ScopeFinance    = api.ScopeFinance
	ScopeOperator   = api.ScopeOperator
)

// SessionCookie is the name of the console's session cookie when it is
// not Secure (the console on loopback, over plain http), scoped to
// /console/.
const SessionCookie = "paywatch_console"

// SecureSessionCookie is its name when it is Secure: the __Host- prefix
// makes the browser keep it only from a secure origin, for this host
// alone (no Domain) and path /, so no sibling host can set or shadow it.
const SecureSessionCookie = "__Host-" + SessionCookie

// signinCookie carries the pre-session CSRF value of the sign-in forms
// (with the __Host- prefix when Secure).
const signinCookie = "paywatch_console_signin"

// hsts is the Strict-Transport-Security of an answer whose cookies are
// Secure: a year, this host.
const hsts = "max-age=31536000"

// touchEvery is how stale a session's recorded last use may get before a
// request records it again (one write per session per minute at most).
const touchEvery = time.Minute

//go:embed ui/*.html
var pageFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Status reports per-network health (availability.Networks).
type Status interface {
	Networks(ctx context.Context) ([]availability.NetworkStatus, error)
}

// Options wires a Console.
type Options struct {
	Service *intents.Service
	Finance *finance.Service
	Reports *reports.Service
	Status  Status
	Config  *config.Config
	Log     *slog.Logger
	// Clock is the console's clock; nil is the wall clock.
	Clock clock.Clock
	// Reader is what the console reads beside the services (the daemon's
	// store). Required.
	Reader Reader
	// Events is the API's event feed, which /console/live waits on under the
	// feed's caps (events.max_waiters, events.max_waiters_per_key): an
	// *api.Server. Required.
	Events EventWaiter
	// SignInLinks enables /console/signin/link (one-time sign-in tokens,
	// confirmed by a POST); the daemon sets it from console.signin_links,
	// which only the local sandbox turns on (and mainnet refuses).
	SignInLinks bool
	// SampleEvery is how often Run samples network lag for the lag chart;
	// default 30s.
	SampleEvery time.Duration
}

// EventWaiter waits for the event feed, under its caps.
type EventWaiter interface {
	// WaitEvents returns once an event after seq exists or ctx ends; beyond
	// the caps it fails with api.ErrTooManyWaiters at once.
	WaitEvents(ctx context.Context, keyID string, seq int64) error
}

// Console is the console's HTTP handler.
type Console struct {
	svc     *intents.Service
	finance *finance.Service
	reports *reports.Service
	store   Reader
	status  Status
	cfg     *config.Config
	log     *slog.Logger
	now     func() time.Time
	opt     Options
	mux     *http.ServeMux
	pages   map[string]*template.Template
	fails   *failLimiter
	lag     *lagRing
	events  EventWaiter
	// proxies are the trusted proxies (config trusted_proxies).
	proxies []netip.Prefix
}

// New returns the console handler with every route mounted.
func New(opt Options) (*Console, error) {
	opt.Log = logs.Or(opt.Log)
	opt.Clock = clock.Or(opt.Clock)
	if opt.SampleEvery <= 0 {
		opt.SampleEvery = 30 * time.Second
	}
	if opt.Events == nil {
		return nil, errors.New("console: Options.Events (the API's event feed) is required")
	}
	if opt.Reader == nil {
		return nil, errors.New("console: Options.Reader is required")
	}
	c := &Console{svc: opt.Service, finance: opt.Finance, reports: opt.Reports, store: opt.Reader, status: opt.Status, cfg: opt.Config,
		log: opt.Log.With("component", "console"), now: opt.Clock.Now, opt: opt, mux: http.NewServeMux(),
		lag: newLagRing(time.Hour), events: opt.Events,
		fails: newFailLimiter(opt.Config.Console.SignInAttempts), proxies: opt.Config.Proxies()}
	var err error
	if c.pages, err = parsedPages(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

// parsedPages parses the page templates once per process: they depend on
// nothing of a console (funcs is the package's), and a parsed template is
// safe to execute from many goroutines, so every console shares them (a
// test or the simulator builds many consoles: parsing was most of New).
var parsedPages = sync.OnceValues(func() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	names, err := fs.Glob(pageFiles, "ui/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if n == "ui/layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(pageFiles, "ui/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		pages[strings.TrimSuffix(strings.TrimPrefix(n, "ui/"), ".html")] = t
	}
	return pages, nil
})

// ServeHTTP serves the console with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if c.secure(r) {
		h.Set("Strict-Transport-Security", hsts)
	}
	c.mux.ServeHTTP(w, r)
}

// session is a signed-in request's identity.
type session struct {
	key   store.APIKey
	token string
	csrf  string
	// stores is set for an every-store key on an instance of several
	// stores: its pages then name each row's store and offer a store
	// filter (one store's instance looks as it always did).
	stores bool
}

func (s *session) can(scope string) bool { return s != nil && s.key.HasScope(scope) }

type handler func(w http.ResponseWriter, r *http.Request, s *session)

func (c *Console) routes() {
	static, _ := fs.Sub(staticFiles, "static")
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET /console/signin", c.signinPage)
	c.mux.HandleFunc("POST /console/signin", c.signin)
	if c.opt.SignInLinks {
		c.mux.HandleFunc("GET /console/signin/link", c.signinLinkPage)
		c.mux.HandleFunc("POST /console/signin/link", c.signinLink)
	}
	c.mux.Handle("POST /console/signout", c.auth("", c.signout))
	c.mux.Handle("GET /console/{$}", c.auth("", c.home))
	c.mux.Handle("GET /console/live", c.auth("", c.live))

	c.mux.Handle("GET /console/inbox", c.auth(ScopeFinance, c.inbox))
	c.mux.Handle("GET /console/transfers/{id}", c.auth(ScopeFinance, c.transfer))
	c.mux.Handle("POST /console/transfers/{id}/resolve", c.auth(ScopeFinance, c.resolve))
	c.mux.Handle("GET /console/reconciliation", c.auth(ScopeFinance, c.reconciliation))
	c.mux.Handle("GET /console/reconciliation/download", c.auth(ScopeFinance, c.reconciliationDownload))
	c.mux.Handle("GET /console/balances", c.auth(ScopeFinance, c.balances))

	c.mux.Handle("GET /console/search", c.auth("", c.search))
	c.mux.Handle("GET /console/intents/{id}", c.auth("", c.intent))
	c.mux.Handle("GET /console/intents/{id}/qr.png", c.auth("", c.intentQR))
	c.mux.Handle("GET /console/payables/{kind}/{reference}", c.auth("", c.payable))

	c.mux.Handle("GET /console/networks", c.auth(ScopeOperator, instance(c, c.networks)))
	c.mux.Handle("POST /console/networks/{network}/rescan", c.auth(ScopeOperator, instance(c, c.rescan)))
	c.mux.Handle("POST /console/networks/{network}/reconcile", c.auth(ScopeOperator, instance(c, c.reconcile)))
	c.mux.Handle("GET /console/webhooks", c.auth(ScopeOperator, c.webhooks))
	c.mux.Handle("POST /console/webhooks/{name}/redeliver", c.auth(ScopeOperator, c.redeliver))
	c.mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error", nil, "Not found", errorData{Message: "There is no console page at " + r.URL.Path + "."})
	})
}

// auth resolves the session cookie and checks scope ("" = any signed-in
// key); POSTs must carry the session's CSRF token.
func (c *Console) auth(scope string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure := c.secure(r)
		ck, err := r.Cookie(cookieName(SessionCookie, secure))
		if err != nil || ck.Value == "" || len(ck.Value) > 100 {
			c.toSignin(w, r)
			return
		}
		now := c.now()
		cs, err := c.store.ConsoleSessionByToken(r.Context(), ck.Value, now)
		if errors.Is(err, store.ErrNotFound) {
			clearCookie(w, secure, SessionCookie)
			c.toSignin(w, r)
			return
		}
		if err != nil {
			c.internal(w, r, err)
			return
		}
		if idle := c.cfg.Console.IdleTimeout.Duration; now.Sub(cs.LastSeenAt) > idle {
			if err := c.store.DeleteConsoleSession(r.Context(), ck.Value, now); err != nil {
				c.internal(w, r, err)
				return
			}
			clearCookie(w, secure, SessionCookie)
			c.log.Info("console session ended: idle", "key", cs.Key.Name, "session", cs.ID, "idle", now.Sub(cs.LastSeenAt).Round(time.Second))
			c.toSignin(w, r)
			return
		}
		// The pages' live refresh is not use: a tab left open must not keep
		// a session alive.
		if !strings.HasPrefix(r.URL.Path, "/console/live") && now.Sub(cs.LastSeenAt) >= touchEvery {
			if err := c.store.TouchConsoleSession(r.Context(), ck.Value, now); err != nil {
				c.internal(w, r, err)
				return
			}
		}
		s := &session{key: cs.Key, token: ck.Value, csrf: csrfOf(ck.Value)}
		if s.key.Store == "" {
			n, err := c.store.ShopCount(r.Context())
			if err != nil {
				c.internal(w, r, err)
				return
			}
			s.stores = n > 1
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) {
				c.render(w, r, http.StatusForbidden, "error", s, "Refused", errorData{
					Message: "missing or wrong CSRF token: reload the page and submit the form again"})
				return
			}
		}
		if scope != "" && !s.can(scope) {
			c.render(w, r, http.StatusForbidden, "error", s, "Forbidden", errorData{
				Message: fmt.Sprintf("this API key lacks the %q scope", scope)})
			return
		}
		h(w, r, s)
	})
}

func (c *Console) toSignin(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/console/live") {
		http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusUnauthorized, "error", nil, "Signed out", errorData{Message: "your session ended: sign in again"})
}

// instance guards the instance's own pages (networks, rescans,
// reconciles): an every-store key's. A store's key is refused them; they
// show every store's node state and the reconciler's findings.
func instance(c *Console, h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		if s.ownStore() != "" {
			c.render(w, r, http.StatusForbidden, "error", s, "Forbidden", errorData{
				Message: "this API key belongs to store " + s.ownStore() + "; the networks pages are the whole instance's and need an every-store key"})
			return
		}
		h(w, r, s)
	}
}

// csrfOf derives a session's CSRF token from its secret: pages carry it in
// forms, and it cannot be computed without the HttpOnly cookie.
func csrfOf(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("paywatch console csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// secure reports whether the answer's cookies are Secure (and the answer
// says HSTS): always when configured or by default off loopback
// (config.ConsoleSecureCookies), and for a request over TLS or one a
// trusted proxy says came over https.
func (c *Console) secure(r *http.Request) bool {
	return c.cfg.ConsoleSecureCookies() || c.secureRequest(r)
}

// cookieName is a cookie's name: with the __Host- prefix when Secure.
func cookieName(name string, secure bool) string {
	if secure {
		return "__Host-" + name
	}
	return name
}

// newCookie is a console cookie: a Secure one is a __Host- cookie (path /,
// no Domain), a plain one is scoped to /console/.
func newCookie(secure bool, name, value string, maxAge int) *http.Cookie {
	ck := &http.Cookie{Name: cookieName(name, secure), Value: value, Path: "/console/", MaxAge: maxAge,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
	if secure {
		ck.Path = "/"
	}
	return ck
}

func setCookie(w http.ResponseWriter, secure bool, name, value string, maxAge time.Duration) {
	http.SetCookie(w, newCookie(secure, name, value, int(maxAge/time.Second)))
}

func clearCookie(w http.ResponseWriter, secure bool, name string) {
	http.SetCookie(w, newCookie(secure, name, "", -1))
}

// startSession opens a session for key and sets its cookie.
func (c *Console) startSession(w http.ResponseWriter, r *http.Request, key store.APIKey) error {
	token := randomToken()
	now := c.now()
	ttl := c.cfg.Console.SessionTTL.Duration
	if err := c.store.CreateConsoleSession(r.Context(), token, key.ID, now, now.Add(ttl)); err != nil {
		return err
	}
	setCookie(w, c.secure(r), SessionCookie, token, ttl)
	clearCookie(w, c.secure(r), signinCookie)
	c.log.Info("console sign-in", "key", key.Name, "store", key.Store, "session", store.ConsoleSessionID(token))
	return nil
}

type signinData struct {
	Token   string
	Message string
}

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	c.renderSignin(w, r, http.StatusOK, "")
}

func (c *Console) renderSignin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := randomToken()
	setCookie(w, c.secure(r), signinCookie, tok, 30*time.Minute)
	c.render(w, r, status, "signin", nil, "Sign in", signinData{Token: tok, Message: msg})
}

// signin exchanges an API key (POST body) for a session. A valid key
// always signs in; a wrong one counts against its client (clientAddr,
// bucketed by clientaddr.Bucket), which beyond console.signin_attempts a minute
// is answered 429. The key is checked either way: the throttle must never
// stand between a valid key and its session (another person behind the
// same address), and the check costs what any API request with a bearer
// key costs.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !c.signinCSRF(r) {
		c.renderSignin(w, r, http.StatusForbidden, "missing or wrong CSRF token: the sign-in form expired, try again")
		return
	}
	plain := strings.TrimSpace(r.PostFormValue("api_key"))
	key, err := store.APIKey{}, error(store.ErrNotFound)
	if plain != "" && len(plain) <= 200 {
		key, err = c.store.APIKeyByPlain(r.Context(), plain)
	}
	if errors.Is(err, store.ErrNotFound) {
		status, msg := c.failed(r)
		c.renderSignin(w, r, status, msg)
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if key.AccountPrefix != "" {
		// The console shows every account: a key bound to some of them is
		// a storefront server's, not a person's.
		c.renderSignin(w, r, http.StatusForbidden, "this API key is bound to the accounts starting with "+key.AccountPrefix+
			"; the console needs a key that is not bound to an account prefix")
		return
	}
	if err := c.startSession(w, r, key); err != nil {
		c.internal(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// signinCSRF checks the sign-in forms' pre-session CSRF value.
func (c *Console) signinCSRF(r *http.Request) bool {
	ck, err := r.Cookie(cookieName(signinCookie, c.secure(r)))
	return err == nil && ck.Value != "" && hmac.Equal([]byte(ck.Value), []byte(r.PostFormValue("csrf")))
}

// failed counts a failed sign-in of the request's client and says how to
// answer it: 401, or 429 once the client is over its limit (logged once
// per window, so a guessing client cannot fill the log).
func (c *Console) failed(r *http.Request) (int, string) {
	client := c.clientAddr(r)
	bucket := clientaddr.Bucket(client)
	n := c.fails.fail(bucket, c.now())
	if n <= c.fails.max {
		c.log.Warn("console sign-in refused", "client", client.String())
		return http.StatusUnauthorized, "unknown or revoked API key"
	}
	if n == c.fails.max+1 {
		c.log.Warn("console sign-in throttled: too many failures", "client", client.String(), "per", bucket.String())
	}
	return http.StatusTooManyRequests, "too many failed sign-ins from your address: wait a minute (a valid key still signs in)"
}

type signinLinkData struct {
	Token   string
	Message string
}

// signinLinkPage is where a one-time link leads: a form that POSTs the
// token, which the page's script takes from the link's fragment (browsers
// never send a fragment, so no proxy or log sees the token), after the
// person confirms. Nothing is exchanged on a GET.
func (c *Console) signinLinkPage(w http.ResponseWriter, r *http.Request) {
	c.renderSigninLink(w, r, http.StatusOK, "")
}

func (c *Console) renderSigninLink(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := randomToken()
	setCookie(w, c.secure(r), signinCookie, tok, 30*time.Minute)
	c.render(w, r, status, "signinlink", nil, "Sign in with a one-time link", signinLinkData{Token: tok, Message: msg})
}

// signinLink exchanges a one-time sign-in token (POST body, with the
// form's CSRF value) for a session (sandbox).
func (c *Console) signinLink(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !c.signinCSRF(r) {
		c.renderSigninLink(w, r, http.StatusForbidden, "missing or wrong CSRF token: open the link again")
		return
	}
	now := c.now()
	tok := strings.TrimSpace(r.PostFormValue("token"))
	key, err := store.APIKey{}, error(store.ErrNotFound)
	if tok != "" && len(tok) <= 100 {
		key, err = c.store.UseSignInToken(r.Context(), tok, now)
	}
	if errors.Is(err, store.ErrNotFound) {
		status, msg := c.failed(r)
		if status == http.StatusUnauthorized {
			msg = "this sign-in link was used already or has expired: sign in with an API key"
		}
		c.renderSignin(w, r, status, msg)
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if err := c.startSession(w, r, key); err != nil {
		c.internal(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// IssueSignInLink returns the path of a one-time sign-in link for key,
// valid for ttl. It works only when Options.SignInLinks is set (the
// sandbox); the link's token is single-use and is not the API key.
func (c *Console) IssueSignInLink(ctx context.Context, key store.APIKey, ttl time.Duration) (string, error) {
	if !c.opt.SignInLinks {
		return "", errors.New("console: sign-in links are not enabled")
	}
	return NewSignInLink(ctx, c.store, key, c.now(), ttl)
}

// SignInTokens stores one-time sign-in tokens.
type SignInTokens interface {
	CreateSignInToken(ctx context.Context, token, keyID string, now, expires time.Time) error
}

// NewSignInLink stores a one-time sign-in token for key, valid from now for
// ttl, and returns the path of its link: /console/signin/link#<token>. The
// token is in the fragment, which a browser never sends; the page posts it
// once the person confirms. Another process (the local sandbox) may issue
// it; the daemon exchanges it only when console.signin_links is on. The
// token is single-use and is not the API key.
func NewSignInLink(ctx context.Context, st SignInTokens, key store.APIKey, now time.Time, ttl time.Duration) (string, error) {
	tok := randomToken()
	if err := st.CreateSignInToken(ctx, tok, key.ID, now, now.Add(ttl)); err != nil {
		return "", fmt.Errorf("console: sign-in link for key %s: %w", key.Name, err)
	}
	return "/console/signin/link#" + tok, nil
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.store.DeleteConsoleSession(r.Context(), s.token, c.now()); err != nil {
		c.internal(w, r, err)
		return
	}
	clearCookie(w, c.secure(r), SessionCookie)
	c.log.Info("console sign-out", "key", s.key.Name, "session", store.ConsoleSessionID(s.token))
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
}

// home sends a person to the first screen their key may open.
func (c *Console) home(w http.ResponseWriter, r *http.Request, s *session) {
	switch {
	case s.can(ScopeFinance):
		http.Redirect(w, r, "/console/inbox", http.StatusSeeOther)
	case s.can(ScopeOperator) && s.ownStore() == "":
		http.Redirect(w, r, "/console/networks", http.StatusSeeOther)
	case s.can(ScopeOperator):
		http.Redirect(w, r, "/console/webhooks", http.StatusSeeOther)
	default:
		http.Redirect(w, r, "/console/search", http.StatusSeeOther)
	}
}

// page is what every template receives.
type page struct {
	Title   string
	Active  string
	Session *session
	Now     time.Time
	Data    any
}

// Can reports whether the signed-in key has scope.
func (p page) Can(scope string) bool { return p.Session.can(scope) }

// KeyName is the signed-in API key's name.
func (p page) KeyName() string {
	if p.Session == nil {
		return ""
	}
	return p.Session.key.Name
}

// KeyScopes lists the signed-in API key's scopes ("storefront, finance").
func (p page) KeyScopes() string {
	if p.Session == nil {
		return ""
	}
	return strings.Join(p.Session.key.Scopes, ", ")
}

// CSRF is the token forms carry.
func (p page) CSRF() string {
	if p.Session == nil {
		return ""
	}
	return p.Session.csrf
}

type errorData struct{ Message string }

// render writes a page; a template failure is our bug and a 500.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, s *session, title string, data any) {
	t := c.pages[name]
	if t == nil {
		c.internal(w, r, fmt.Errorf("no template %q", name))
		return
	}
	var buf strings.Builder
	if err := t.Execute(&buf, page{Title: title, Active: name, Session: s, Now: c.now().UTC(), Data: data}); err != nil {
		c.log.Error("console template failed", "page", name, "err", err)
		http.Error(w, "internal error; the operator's log has the details", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(buf.String()))
}

func (c *Console) internal(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	if store.IsUnavailable(err) {
		// A database failover: nothing was done; the same request again
		// in a moment does it.
		c.log.Warn("console request failed: database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "5")
		c.render(w, r, http.StatusServiceUnavailable, "error", nil, "Error", errorData{Message: "the database is unavailable (a failover may be in progress); nothing was done: try again in a few seconds"})
		return
	}
	c.log.Error("console request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	c.render(w, r, http.StatusInternalServerError, "error", nil, "Error", errorData{Message: "internal error; the operator's log has the details"})
}

// fail shows a service error with the API's text, or a 500.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var e *intents.Error
	if errors.As(err, &e) {
		c.render(w, r, api.StatusOf(e.Kind), "error", s, "Refused", errorData{Message: e.Message})
		return
	}
	c.internal(w, r, err)
}
