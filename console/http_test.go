package console_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// Every console page sends a strict CSP that forbids framing.
func TestPagesSendStrictSecurityHeaders(t *testing.T) {
	s := newSite(t)
	c := s.client(t)
	for _, path := range []string{"/console/signin", "/console/inbox", "/console/nope"} {
		resp, _ := c.get(t, path)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP allows unsafe-inline: %q", path, csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", path, resp.Header.Get("X-Frame-Options"))
		}
	}
	// Signed out, a screen sends you to the sign-in page.
	resp, _ := c.get(t, "/console/inbox")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" {
		t.Fatalf("signed-out inbox: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// The session cookie is HttpOnly, SameSite=Strict, path-scoped on plain
// http, and Secure (a __Host- cookie) over TLS or when configured; only its
// hash is stored.
func TestSessionCookieFlagsAndHashedStorage(t *testing.T) {
	s := newSite(t)
	c := s.client(t)
	_, page := c.get(t, "/console/signin")
	resp, _ := c.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {s.Keys["finance"]}})
	ck := sessionCookie(resp)
	if ck == nil {
		t.Fatalf("no session cookie: %v", resp.Header["Set-Cookie"])
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/console/" || ck.Secure {
		t.Fatalf("cookie flags over plain HTTP: %+v", ck)
	}
	var n int
	if err := s.Store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM console_sessions WHERE hash = sha256(convert_to($1, 'UTF8'))`, ck.Value).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored sessions by hash: %d %v", n, err)
	}
	if err := s.Store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM console_sessions WHERE position(convert_to($1, 'UTF8') in hash) > 0`, ck.Value).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the plaintext token is stored: %d %v", n, err)
	}

	// Configured Secure (behind a TLS proxy).
	sec := newSite(t, paywatchtest.WithConfig(func(c *config.Config) { on := true; c.Console.SecureCookies = &on }))
	c2 := sec.client(t)
	_, page = c2.get(t, "/console/signin")
	resp, _ = c2.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {sec.Keys["finance"]}})
	if ck := sessionCookie(resp); ck == nil || !ck.Secure || !ck.HttpOnly || ck.Name != console.SecureSessionCookie || ck.Path != "/" {
		t.Fatalf("secure_cookies: cookie %+v", ck)
	}

	// Over TLS.
	con, err := console.New(console.Options{Service: s.Service, Reader: s.Store, Finance: s.Finance, Reports: s.Reports, Status: s.Nets, Config: s.Config, Clock: s.Clock, Events: s.API})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(con)
	defer ts.Close()
	tc := ts.Client()
	tc.Jar = c.Jar
	tc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	tc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	tls := &client{Client: tc, base: ts.URL}
	_, page = tls.get(t, "/console/signin")
	resp, _ = tls.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {s.Keys["finance"]}})
	if ck := sessionCookie(resp); ck == nil || !ck.Secure || ck.Name != console.SecureSessionCookie {
		t.Fatalf("over TLS: cookie %+v (%d)", ck, resp.StatusCode)
	}
}

// An API key in a URL never signs anyone in; the sign-in form needs its
// CSRF value; failed sign-ins are rate-limited per address, but a valid
// key always signs in.
func TestSignInRefusalsAndRateLimit(t *testing.T) {
	s := newSite(t)
	c := s.client(t)
	resp, _ := c.get(t, "/console/signin?api_key="+url.QueryEscape(s.Keys["finance"]))
	if sessionCookie(resp) != nil {
		t.Fatal("a key in the URL opened a session")
	}
	resp, body := c.post(t, "/console/signin", url.Values{"api_key": {s.Keys["finance"]}})
	if resp.StatusCode != http.StatusForbidden || sessionCookie(resp) != nil || !strings.Contains(body, "CSRF") {
		t.Fatalf("sign-in without the form's CSRF value: %d", resp.StatusCode)
	}
	max := s.Config.Console.SignInAttempts
	for i := 0; i < max; i++ {
		_, page := c.get(t, "/console/signin")
		resp, body := c.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {"pw_wrong"}})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "unknown or revoked API key") {
			t.Fatalf("wrong key %d: %d", i, resp.StatusCode)
		}
	}
	_, page := c.get(t, "/console/signin")
	resp, body = c.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {"pw_wrong"}})
	if resp.StatusCode != http.StatusTooManyRequests || sessionCookie(resp) != nil || !strings.Contains(body, "too many failed sign-ins") {
		t.Fatalf("a wrong key after %d failures got %d", max, resp.StatusCode)
	}
	// The right key is never refused: another person may share the address.
	c.signIn(t, s.Keys["finance"])
	// A minute later a wrong key is a plain failure again.
	s.Clock.Advance(61e9)
	other := s.client(t)
	_, page = other.get(t, "/console/signin")
	if resp, _ := other.post(t, "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {"pw_wrong"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong key a minute later: %d", resp.StatusCode)
	}
}

// A storefront key sees lookups only: it cannot open or post a resolution,
// and nothing changes.
func TestStorefrontCannotResolve(t *testing.T) {
	s := newSite(t)
	s.scenario(t)
	dust := s.byClass(t, "dust")
	c := s.client(t)
	csrf := c.signIn(t, s.Keys["storefront"])
	before := s.Counts()
	resp, body := c.post(t, "/console/transfers/"+dust.ID+"/resolve", url.Values{"csrf": {csrf}, "action": {"ignore"}, "note": {"spam"}})
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `lacks the &#34;finance&#34; scope`) {
		t.Fatalf("storefront resolve: %d %s", resp.StatusCode, body)
	}
	if after := s.Counts(); after["resolutions"] != before["resolutions"] || after["events"] != before["events"] {
		t.Fatalf("a refused resolution changed %v -> %v", before, after)
	}
	for _, path := range []string{"/console/transfers/" + dust.ID, "/console/inbox", "/console/networks"} {
		if resp, _ := c.get(t, path); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("storefront %s: %d", path, resp.StatusCode)
		}
	}
	if resp, _ := c.get(t, "/console/intents/"+*dust.IntentID); resp.StatusCode != http.StatusOK {
		t.Fatalf("storefront intent lookup: %d", resp.StatusCode)
	}
}

// A one-time sign-in link opens one session, once (confirmed by a POST);
// it is refused when links are off, used or expired.
func TestSignInLinkIsSingleUse(t *testing.T) {
	s := newSiteWith(t, console.Options{SignInLinks: true})
	key, err := s.Store.APIKeyByPlain(context.Background(), s.Keys["finance"])
	if err != nil {
		t.Fatal(err)
	}
	link, err := s.Console.IssueSignInLink(context.Background(), key, 5*60e9)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(link, s.Keys["finance"]) {
		t.Fatal("the link carries the API key")
	}
	c := s.client(t)
	resp, _ := c.useLink(t, link)
	if resp.StatusCode != http.StatusSeeOther || sessionCookie(resp) == nil {
		t.Fatalf("first use: %d", resp.StatusCode)
	}
	if resp, _ := c.get(t, "/console/inbox"); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in by link, inbox: %d", resp.StatusCode)
	}
	resp, body := s.client(t).useLink(t, link)
	if resp.StatusCode != http.StatusUnauthorized || sessionCookie(resp) != nil || !strings.Contains(body, "used already or has expired") {
		t.Fatalf("second use: %d", resp.StatusCode)
	}
	late, err := s.Console.IssueSignInLink(context.Background(), key, 60e9)
	if err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(2 * 60e9)
	if resp, _ := s.client(t).useLink(t, late); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("expired link: %d", resp.StatusCode)
	}
	// Without SignInLinks (serve, not the sandbox) there is no such route.
	off := newSite(t)
	if _, err := off.Console.IssueSignInLink(context.Background(), key, 60e9); err == nil {
		t.Fatal("links issued while disabled")
	}
	path, _, _ := strings.Cut(link, "#")
	if resp, _ := off.client(t).get(t, path); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("link route without SignInLinks: %d", resp.StatusCode)
	}
	if resp, _ := off.client(t).post(t, path, url.Values{"token": {"x"}}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("link POST without SignInLinks: %d", resp.StatusCode)
	}
}

// Signing out deletes the session: the old cookie opens nothing.
func TestSignOutEndsTheSession(t *testing.T) {
	s := newSite(t)
	c := s.client(t)
	csrf := c.signIn(t, s.Keys["finance"])
	u, _ := url.Parse(s.URL + "/console/")
	var token string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == console.SessionCookie {
			token = ck.Value
		}
	}
	if resp, _ := c.post(t, "/console/signout", url.Values{"csrf": {"wrong"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-out without CSRF: %d", resp.StatusCode)
	}
	if resp, _ := c.post(t, "/console/signout", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	if _, err := s.Store.ConsoleSessionByToken(context.Background(), token, s.Clock.Now()); err != store.ErrNotFound {
		t.Fatalf("session after sign-out: %v", err)
	}
	replay := s.client(t)
	replay.Jar.SetCookies(u, []*http.Cookie{{Name: console.SessionCookie, Value: token, Path: "/console/"}})
	if resp, _ := replay.get(t, "/console/inbox"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("old cookie after sign-out: %d", resp.StatusCode)
	}
}

// A session expires after session_ttl.
func TestSessionExpires(t *testing.T) {
	s := newSite(t)
	c := s.client(t)
	c.signIn(t, s.Keys["finance"])
	s.Clock.Advance(s.Config.Console.SessionTTL.Duration + 1)
	if resp, _ := c.get(t, "/console/inbox"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("expired session: %d", resp.StatusCode)
	}
}
