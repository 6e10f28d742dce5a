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
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
)

// Scopes of API keys: the API's.
const (
	ScopeStorefront = api.ScopeStorefront
	ScopeFinance    = api.ScopeFinance
	ScopeOperator   = api.ScopeOperator
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "paywatch_console"

// signinCookie carries the pre-session CSRF value of the sign-in form.
const signinCookie = "paywatch_console_signin"

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
	Now     func() time.Time
	// SignInLinks enables GET /console/signin/link (one-time sign-in
	// tokens); the daemon sets it from console.signin_links, which only the
	// local sandbox turns on.
	SignInLinks bool
	// SampleEvery is how often Run samples network lag for the lag chart;
	// default 30s.
	SampleEvery time.Duration
}

// Console is the console's HTTP handler.
type Console struct {
	svc     *intents.Service
	finance *finance.Service
	reports *reports.Service
	store   *store.Store
	status  Status
	cfg     *config.Config
	log     *slog.Logger
	now     func() time.Time
	opt     Options
	mux     *http.ServeMux
	pages   map[string]*template.Template
	fails   failLimiter
	lag     *lagRing
}

// New returns the console handler with every route mounted.
func New(opt Options) (*Console, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.SampleEvery <= 0 {
		opt.SampleEvery = 30 * time.Second
	}
	c := &Console{svc: opt.Service, finance: opt.Finance, reports: opt.Reports, store: opt.Service.Store(), status: opt.Status, cfg: opt.Config,
		log: opt.Log.With("component", "console"), now: opt.Now, opt: opt, mux: http.NewServeMux(),
		pages: map[string]*template.Template{}, lag: newLagRing(time.Hour)}
	c.fails.max = opt.Config.Console.SignInAttempts
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
		c.pages[strings.TrimSuffix(strings.TrimPrefix(n, "ui/"), ".html")] = t
	}
	c.routes()
	return c, nil
}

// ServeHTTP serves the console with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// session is a signed-in request's identity.
type session struct {
	key   store.APIKey
	token string
	csrf  string
}

func (s *session) can(scope string) bool { return s != nil && s.key.HasScope(scope) }

type handler func(w http.ResponseWriter, r *http.Request, s *session)

func (c *Console) routes() {
	static, _ := fs.Sub(staticFiles, "static")
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET /console/signin", c.signinPage)
	c.mux.HandleFunc("POST /console/signin", c.signin)
	if c.opt.SignInLinks {
		c.mux.HandleFunc("GET /console/signin/link", c.signinLink)
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

	c.mux.Handle("GET /console/networks", c.auth(ScopeOperator, c.networks))
	c.mux.Handle("POST /console/networks/{network}/rescan", c.auth(ScopeOperator, c.rescan))
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
		ck, err := r.Cookie(SessionCookie)
		if err != nil || ck.Value == "" || len(ck.Value) > 100 {
			c.toSignin(w, r)
			return
		}
		cs, err := c.store.ConsoleSessionByToken(r.Context(), ck.Value, c.now())
		if errors.Is(err, store.ErrNotFound) {
			clearCookie(w, r, c.secure(r), SessionCookie)
			c.toSignin(w, r)
			return
		}
		if err != nil {
			c.internal(w, r, err)
			return
		}
		s := &session{key: cs.Key, token: ck.Value, csrf: csrfOf(ck.Value)}
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

func (c *Console) secure(r *http.Request) bool {
	return r.TLS != nil || (c.cfg.Console.SecureCookies != nil && *c.cfg.Console.SecureCookies)
}

func setCookie(w http.ResponseWriter, secure bool, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/console/", MaxAge: int(maxAge / time.Second),
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
}

func clearCookie(w http.ResponseWriter, _ *http.Request, secure bool, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/console/", MaxAge: -1,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
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
	clearCookie(w, r, c.secure(r), signinCookie)
	c.log.Info("console sign-in", "key", key.Name)
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

// signin exchanges an API key (POST body) for a session.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	ck, err := r.Cookie(signinCookie)
	if err != nil || ck.Value == "" || !hmac.Equal([]byte(ck.Value), []byte(r.PostFormValue("csrf"))) {
		c.renderSignin(w, r, http.StatusForbidden, "missing or wrong CSRF token: the sign-in form expired, try again")
		return
	}
	ip := clientIP(r)
	now := c.now()
	if !c.fails.allowed(ip, now) {
		c.renderSignin(w, r, http.StatusTooManyRequests, "too many failed sign-ins from your address: wait a minute and try again")
		return
	}
	plain := strings.TrimSpace(r.PostFormValue("api_key"))
	key, err := store.APIKey{}, error(store.ErrNotFound)
	if plain != "" && len(plain) <= 200 {
		key, err = c.store.APIKeyByPlain(r.Context(), plain)
	}
	if errors.Is(err, store.ErrNotFound) {
		c.fails.fail(ip, now)
		c.log.Warn("console sign-in refused", "client", ip)
		c.renderSignin(w, r, http.StatusUnauthorized, "unknown or revoked API key")
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

// signinLink exchanges a one-time sign-in token for a session (sandbox).
func (c *Console) signinLink(w http.ResponseWriter, r *http.Request) {
	ip := clientIP(r)
	now := c.now()
	if !c.fails.allowed(ip, now) {
		c.renderSignin(w, r, http.StatusTooManyRequests, "too many failed sign-ins from your address: wait a minute and try again")
		return
	}
	tok := r.URL.Query().Get("t")
	key, err := store.APIKey{}, error(store.ErrNotFound)
	if tok != "" && len(tok) <= 100 {
		key, err = c.store.UseSignInToken(r.Context(), tok, now)
	}
	if errors.Is(err, store.ErrNotFound) {
		c.fails.fail(ip, now)
		c.renderSignin(w, r, http.StatusUnauthorized, "this sign-in link was used already or has expired: sign in with an API key")
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
// ttl, and returns the path of its link. Another process (the local
// sandbox) may issue it; the daemon exchanges it only when
// console.signin_links is on. The token is single-use and is not the API key.
func NewSignInLink(ctx context.Context, st SignInTokens, key store.APIKey, now time.Time, ttl time.Duration) (string, error) {
	tok := randomToken()
	if err := st.CreateSignInToken(ctx, tok, key.ID, now, now.Add(ttl)); err != nil {
		return "", fmt.Errorf("console: sign-in link for key %s: %w", key.Name, err)
	}
	return "/console/signin/link?t=" + tok, nil
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.store.DeleteConsoleSession(r.Context(), s.token, c.now()); err != nil {
		c.internal(w, r, err)
		return
	}
	clearCookie(w, r, c.secure(r), SessionCookie)
	c.log.Info("console sign-out", "key", s.key.Name)
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
}

// home sends a person to the first screen their key may open.
func (c *Console) home(w http.ResponseWriter, r *http.Request, s *session) {
	switch {
	case s.can(ScopeFinance):
		http.Redirect(w, r, "/console/inbox", http.StatusSeeOther)
	case s.can(ScopeOperator):
		http.Redirect(w, r, "/console/networks", http.StatusSeeOther)
	default:
		http.Redirect(w, r, "/console/search", http.StatusSeeOther)
	}
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// failLimiter counts failed sign-ins per client address in one-minute
// windows; at max failures the address is refused until its window ends.
type failLimiter struct {
	mu  sync.Mutex
	max int
	by  map[string]failWindow
}

type failWindow struct {
	start time.Time
	n     int
}

func (l *failLimiter) allowed(ip string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.by[ip]
	return !ok || now.Sub(w.start) >= time.Minute || now.Before(w.start) || w.n < l.max
}

func (l *failLimiter) fail(ip string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil || len(l.by) > 10000 {
		l.by = map[string]failWindow{}
	}
	w := l.by[ip]
	if now.Sub(w.start) >= time.Minute || now.Before(w.start) {
		w = failWindow{start: now}
	}
	w.n++
	l.by[ip] = w
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
