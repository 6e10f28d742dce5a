package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paywatch/paywatch/console"
)

// In Chromium, a one-time link's page takes the token from the fragment
// into its form and drops it from the address, and signs in only when the
// person presses the button; the server never saw the token in a URL.
func TestChromiumSignInLinkNeedsTheButton(t *testing.T) {
	s := newSiteWith(t, console.Options{SignInLinks: true})
	key, err := s.Store.APIKeyByPlain(context.Background(), s.Keys["finance"])
	if err != nil {
		t.Fatal(err)
	}
	link, err := s.Console.IssueSignInLink(context.Background(), key, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(link, "#")
	ctx := browser(t, 1200)
	if st := open(t, ctx, s.URL+link); st != 200 {
		t.Fatalf("the link's page: %d", st)
	}
	waitFor(t, ctx, `document.querySelector('#signin-link input[name=token]').value !== ''`)
	if got := eval[string](t, ctx, `document.querySelector('#signin-link input[name=token]').value`); got != token {
		t.Fatalf("the form holds %q, want the link's token", got)
	}
	if got := eval[string](t, ctx, `location.href`); strings.Contains(got, token) || strings.Contains(got, "#") {
		t.Fatalf("the address still holds the token: %s", got)
	}
	if got := eval[int](t, ctx, `document.cookie.length`); got != 0 {
		t.Fatalf("cookies readable by the page: %d bytes", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#signout').length`); n != 0 {
		t.Fatal("signed in before the button was pressed")
	}
	run(t, ctx, chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("signout")))
	if got := eval[string](t, ctx, `location.pathname`); got != "/console/inbox" {
		t.Fatalf("after the button: %s", got)
	}
}
