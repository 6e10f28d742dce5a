package console_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/paywatchtest"
)

// signinFrom posts key to the sign-in form as a request forwarded for
// client (X-Forwarded-For; "" for none), with extra headers, and returns
// the answer.
func (s *site) signinFrom(t *testing.T, client, key string, extra ...string) *http.Response {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, form url.Values) (*http.Response, string) {
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, s.URL+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if client != "" {
			req.Header.Set("X-Forwarded-For", client)
		}
		for i := 0; i+1 < len(extra); i += 2 {
			req.Header.Set(extra[i], extra[i+1])
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, b.String()
	}
	_, page := do("GET", "/console/signin", nil)
	resp, _ := do("POST", "/console/signin", url.Values{"csrf": {formCSRF(t, page)}, "api_key": {key}})
	return resp
}

// behindProxy is a site whose peer (the test, on 127.0.0.1) is a trusted
// proxy.
func behindProxy(t *testing.T) *site {
	return newSite(t, paywatchtest.WithConfig(func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1"} }))
}

// Behind a trusted proxy each client is counted on its own: one client's
// failures lock that client out, not the others; a valid key signs in
// even from a locked-out address (another user behind the same NAT).
func TestSignInThrottleCountsEachClientBehindAProxy(t *testing.T) {
	s := behindProxy(t)
	max := s.Config.Console.SignInAttempts
	for i := 0; i < max; i++ {
		if resp := s.signinFrom(t, "203.0.113.5", "pw_wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d from A: %d", i, resp.StatusCode)
		}
	}
	if resp := s.signinFrom(t, "203.0.113.5", "pw_wrong"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("A after %d failures: %d, want 429", max, resp.StatusCode)
	}
	if resp := s.signinFrom(t, "198.51.100.7", "pw_wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("B's first failure while A is locked out: %d, want 401", resp.StatusCode)
	}
	if resp := s.signinFrom(t, "198.51.100.7", s.Keys["finance"]); resp.StatusCode != http.StatusSeeOther || sessionCookie(resp) == nil {
		t.Fatalf("B's valid key: %d", resp.StatusCode)
	}
	// A chain of proxies: the client is the rightmost address that is not
	// a trusted proxy.
	if resp := s.signinFrom(t, "198.51.100.9, 203.0.113.5, 127.0.0.1", "pw_wrong"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("A through two proxies: %d, want 429", resp.StatusCode)
	}
	if resp := s.signinFrom(t, "203.0.113.5", s.Keys["finance"]); resp.StatusCode != http.StatusSeeOther || sessionCookie(resp) == nil {
		t.Fatalf("a valid key from the locked-out address: %d, want a session", resp.StatusCode)
	}
}

// X-Forwarded-For from a peer that is not a trusted proxy is ignored: a
// client cannot escape its count by naming other addresses.
func TestSignInThrottleIgnoresForwardedForFromUntrustedPeers(t *testing.T) {
	s := newSite(t)
	max := s.Config.Console.SignInAttempts
	for i := 0; i < max; i++ {
		s.signinFrom(t, "203.0.113."+string(rune('1'+i)), "pw_wrong")
	}
	if resp := s.signinFrom(t, "192.0.2.200", "pw_wrong"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a spoofed X-Forwarded-For after %d failures: %d, want 429", max, resp.StatusCode)
	}
}

// IPv6 clients are counted per /64: a client owns its whole /64 and could
// otherwise take a fresh address for every guess.
func TestSignInThrottleCountsIPv6Per64(t *testing.T) {
	s := behindProxy(t)
	max := s.Config.Console.SignInAttempts
	for i := 0; i < max; i++ {
		s.signinFrom(t, "2001:db8:1:2::"+string(rune('a'+i)), "pw_wrong")
	}
	if resp := s.signinFrom(t, "2001:db8:1:2:ffff:ffff:ffff:ffff", "pw_wrong"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("another address of the same /64: %d, want 429", resp.StatusCode)
	}
	if resp := s.signinFrom(t, "2001:db8:1:3::a", "pw_wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the next /64: %d, want 401", resp.StatusCode)
	}
}

// setCookie returns the Set-Cookie named name in resp.
func setCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name && c.Value != "" {
			return c
		}
	}
	return nil
}

// Off loopback the session cookie is Secure by default, with the __Host-
// prefix (host-only, path /) and HSTS; on loopback it is not, unless a
// trusted proxy says the request came over https.
func TestSessionCookieIsSecureUnlessOnLoopback(t *testing.T) {
	const secureName = "__Host-paywatch_console"
	wide := newSite(t, paywatchtest.WithConfig(func(c *config.Config) { c.Listen, c.AdminListen = "0.0.0.0:8080", config.AdminOnAPI }))
	resp := wide.signinFrom(t, "", wide.Keys["finance"])
	ck := setCookie(resp, secureName)
	if resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.Secure || !ck.HttpOnly || ck.Path != "/" || ck.Domain != "" ||
		ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("listening on 0.0.0.0: %d %v", resp.StatusCode, resp.Header["Set-Cookie"])
	}
	if hsts := resp.Header.Get("Strict-Transport-Security"); !strings.Contains(hsts, "max-age=") {
		t.Fatalf("listening on 0.0.0.0: HSTS %q", hsts)
	}
	// The console on a loopback admin listener beside a wide API listener.
	admin := newSite(t, paywatchtest.WithConfig(func(c *config.Config) { c.Listen = "0.0.0.0:8080"; c.AdminListen = "127.0.0.1:9090" }))
	if resp := admin.signinFrom(t, "", admin.Keys["finance"]); setCookie(resp, "paywatch_console") == nil || setCookie(resp, secureName) != nil {
		t.Fatalf("console on a loopback admin listener: %v", resp.Header["Set-Cookie"])
	}
	local := newSite(t)
	resp = local.signinFrom(t, "", local.Keys["finance"])
	if ck := setCookie(resp, "paywatch_console"); ck == nil || ck.Secure || resp.Header.Get("Strict-Transport-Security") != "" {
		t.Fatalf("listening on loopback: %v HSTS %q", resp.Header["Set-Cookie"], resp.Header.Get("Strict-Transport-Security"))
	}
	// X-Forwarded-Proto: believed from a trusted proxy only.
	resp = local.signinFrom(t, "", local.Keys["finance"], "X-Forwarded-Proto", "https")
	if setCookie(resp, secureName) != nil || resp.Header.Get("Strict-Transport-Security") != "" {
		t.Fatalf("X-Forwarded-Proto from an untrusted peer was believed: %v", resp.Header["Set-Cookie"])
	}
	proxied := behindProxy(t)
	resp = proxied.signinFrom(t, "203.0.113.5", proxied.Keys["finance"], "X-Forwarded-Proto", "https")
	if ck := setCookie(resp, secureName); ck == nil || !ck.Secure || resp.Header.Get("Strict-Transport-Security") == "" {
		t.Fatalf("https through a trusted proxy: %v HSTS %q", resp.Header["Set-Cookie"], resp.Header.Get("Strict-Transport-Security"))
	}
}

// A session unused for console.idle_timeout ends before its absolute
// expiry; use keeps it alive; the pages' live refresh is not use.
func TestSessionEndsWhenIdle(t *testing.T) {
	s := newSite(t)
	idle := s.Config.Console.IdleTimeout.Duration
	c := s.client(t)
	c.signIn(t, s.Keys["finance"])
	for range 3 {
		s.Clock.Advance(idle * 2 / 3)
		if resp, _ := c.get(t, "/console/inbox"); resp.StatusCode != http.StatusOK {
			t.Fatalf("in use every %s: %d", idle*2/3, resp.StatusCode)
		}
	}
	for _, d := range []time.Duration{idle / 2, idle/2 - time.Minute} {
		s.Clock.Advance(d)
		if resp, _ := c.get(t, "/console/live"); resp.StatusCode != http.StatusOK {
			t.Fatalf("live refresh %s after the last use: %d", d, resp.StatusCode)
		}
	}
	s.Clock.Advance(2 * time.Minute)
	resp, _ := c.get(t, "/console/inbox")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" {
		t.Fatalf("%s after the last use, live refresh only: %d, want the sign-in page", idle+time.Minute, resp.StatusCode)
	}
}

// /console/live long-polls count against the event feed's caps (the same
// as GET /v1/events?wait=): beyond events.max_waiters_per_key waiting for
// one key the next gets 429 with Retry-After.
func TestLivePollsAreCapped(t *testing.T) {
	s := newSite(t, paywatchtest.WithConfig(func(c *config.Config) { c.Events.MaxWaitersPerKey = 2; c.Events.MaxWaiters = 10 }))
	c := s.client(t)
	c.signIn(t, s.Keys["all"])
	_, body := c.get(t, "/console/live")
	seq := strings.TrimPrefix(strings.SplitN(body, ",", 2)[0], `{"seq":`)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); wg.Wait() }()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/console/live?seq="+seq, nil)
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.API.LongPolls() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d live polls waiting, want 2", s.API.LongPolls())
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, body := c.get(t, "/console/live?seq="+seq)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "rate_limited") {
		t.Fatalf("a third live poll of the key: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// The API's long-polls share the cap.
	st, _ := s.Do("GET", "/v1/events?wait=1&after="+seq, "all", nil)
	if st != http.StatusTooManyRequests {
		t.Fatalf("an API long-poll of the same key while two live polls wait: %d", st)
	}
}

// A one-time sign-in link carries its token in the fragment (which
// browsers never send, so no proxy logs it), and its page signs in only
// when the person confirms with a POST carrying the form's CSRF value: a
// GET, or a cross-site form without that value, opens nothing.
func TestSignInLinkNeedsAPostConfirmation(t *testing.T) {
	s := newSiteWith(t, console.Options{SignInLinks: true})
	key, err := s.Store.APIKeyByPlain(context.Background(), s.Keys["finance"])
	if err != nil {
		t.Fatal(err)
	}
	link, err := s.Console.IssueSignInLink(context.Background(), key, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	path, token, ok := strings.Cut(link, "#")
	if !ok || strings.Contains(path, "?") || token == "" || strings.Contains(token, "=") {
		t.Fatalf("link %q: want /console/signin/link#<token>", link)
	}
	c := s.client(t)
	// The old GET with the token opens nothing and does not use it up.
	if resp, _ := c.get(t, path+"?t="+token); sessionCookie(resp) != nil {
		t.Fatal("a GET with the token opened a session")
	}
	resp, page := c.get(t, path)
	if resp.StatusCode != http.StatusOK || sessionCookie(resp) != nil || !strings.Contains(page, `method="post" action="/console/signin/link"`) ||
		!strings.Contains(page, `name="token"`) {
		t.Fatalf("the link's page: %d\n%s", resp.StatusCode, page)
	}
	if resp, _ := s.client(t).post(t, "/console/signin/link", url.Values{"token": {token}}); resp.StatusCode != http.StatusForbidden || sessionCookie(resp) != nil {
		t.Fatalf("a POST without the form's CSRF value: %d", resp.StatusCode)
	}
	resp, _ = c.post(t, "/console/signin/link", url.Values{"csrf": {formCSRF(t, page)}, "token": {token}})
	if resp.StatusCode != http.StatusSeeOther || sessionCookie(resp) == nil {
		t.Fatalf("the confirmed POST: %d", resp.StatusCode)
	}
	if resp, _ := c.get(t, "/console/inbox"); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in by link, inbox: %d", resp.StatusCode)
	}
	again := s.client(t)
	_, page = again.get(t, path)
	resp, body := again.post(t, "/console/signin/link", url.Values{"csrf": {formCSRF(t, page)}, "token": {token}})
	if resp.StatusCode != http.StatusUnauthorized || sessionCookie(resp) != nil || !strings.Contains(body, "used already or has expired") {
		t.Fatalf("the token a second time: %d", resp.StatusCode)
	}
}
