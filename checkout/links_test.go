package checkout_test

import (
	"encoding/base64"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/store"
)

func links(t testing.TB, secret string, hosts ...string) *checkout.Links {
	t.Helper()
	c := config.Default().Checkout
	c.PublicBaseURL, c.ReturnHosts = "https://pay.example.com/", hosts
	l, err := checkout.NewLinks([]byte(secret), c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A token names exactly its intent, is the same on every call and for
// every Links of the same secret, differs under another secret, and no
// other string names an intent: a flipped bit, a token of another secret,
// a truncated or padded one, one in another base64 alphabet.
func TestTokenRoundTripAndForgery(t *testing.T) {
	a, a2, b := links(t, testSecret), links(t, testSecret), links(t, testSecret+"!")
	rng := rand.New(rand.NewPCG(23, 1))
	for i := 0; i < 500; i++ {
		id := store.NewID("pi")
		tok, ok := a.Token(id)
		if !ok || len(tok) != checkout.TokenLen {
			t.Fatalf("token of %s: %q %v", id, tok, ok)
		}
		if again, _ := a2.Token(id); again != tok {
			t.Fatalf("token of %s differs between two Links of the same secret", id)
		}
		if got, ok := a.IntentID(tok); !ok || got != id {
			t.Fatalf("IntentID(Token(%s)) = %s %v", id, got, ok)
		}
		if got, ok := b.IntentID(tok); ok {
			t.Fatalf("another secret accepted the token as %s", got)
		}
		if strings.Contains(tok, strings.TrimPrefix(id, "pi_")[:10]) {
			t.Fatalf("token %s shows the id %s", tok, id)
		}
		if a.PageURL(id) != "https://pay.example.com/pay/"+tok {
			t.Fatalf("page URL %s", a.PageURL(id))
		}
		raw, _ := base64.RawURLEncoding.DecodeString(tok)
		raw[rng.IntN(len(raw))] ^= 1 << rng.IntN(8)
		if got, ok := a.IntentID(base64.RawURLEncoding.EncodeToString(raw)); ok {
			t.Fatalf("a flipped bit named %s", got)
		}
		for _, bad := range []string{tok[:checkout.TokenLen-1], tok + "A", strings.ToUpper(tok), base64.StdEncoding.EncodeToString(raw)} {
			if got, ok := a.IntentID(bad); ok && bad != tok {
				t.Fatalf("%q named %s", bad, got)
			}
		}
	}
	for _, id := range []string{"", "pi_", "tr_" + ulid.Make().String(), "pi_" + strings.ToLower(ulid.Make().String()), "pi_x"} {
		if tok, ok := a.Token(id); ok || a.PageURL(id) != "" {
			t.Fatalf("id %q has token %q", id, tok)
		}
	}
	if _, err := checkout.NewLinks([]byte(strings.Repeat("x", checkout.MinSecret-1)), config.Default().Checkout); !errors.Is(err, checkout.ErrShortSecret) {
		t.Fatalf("short secret: %v", err)
	}
}

// A base64 string whose unused last bits are set decodes to the same bytes
// as the canonical token under a lenient decoder; it is not the token.
func TestTokenIsCanonical(t *testing.T) {
	l := links(t, testSecret)
	id := store.NewID("pi")
	tok, _ := l.Token(id)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	for bits := 1; bits < 4; bits++ {
		alt := tok[:len(tok)-1] + string(alphabet[last|bits])
		if alt == tok {
			continue
		}
		if got, ok := l.IntentID(alt); ok {
			t.Fatalf("non-canonical %s named %s", alt, got)
		}
	}
}

func TestReturnURLRule(t *testing.T) {
	l := links(t, testSecret, "shop.example.com", "*.example.org", "localhost:3000", "[::1]")
	ok := []string{
		"https://shop.example.com/orders/1?x=y#z", "http://shop.example.com:8443/", "https://SHOP.example.com/a",
		"https://a.example.org/", "https://a.b.example.org/x", "http://localhost:3000/back", "http://[::1]:9000/",
	}
	for _, u := range ok {
		if err := l.CheckReturnURL("", u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	bad := []string{
		"javascript:alert(1)", "data:text/html,x", "//shop.example.com/x", "/orders/1", "ftp://shop.example.com/",
		"https://evil.example.com/", "https://example.org/", "https://evilexample.org/", "https://shop.example.com.evil.net/",
		"http://localhost:3001/", "http://localhost/", "https://user:pw@shop.example.com/", "https://shop.example.com/a b",
		"https://shop.example.com/\"><script>", "https://shop.example.com/\u00e9", "mailto:a@shop.example.com",
		"https://" + strings.Repeat("a", 2000) + ".example.org/", "https://shop.example.com\\@evil.com/",
	}
	for _, u := range bad {
		if err := l.CheckReturnURL("", u); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	if err := links(t, testSecret).CheckReturnURL("", "https://shop.example.com/"); err == nil {
		t.Error("no return hosts configured, yet a return URL was accepted")
	}
}

// A payable's page token names its payable and nothing else: an intent's
// token is not a payable's (keys of their own), nor the other way round,
// and a changed character is no token at all (issue 35 item 3).
func TestPayableTokensAreTheirOwn(t *testing.T) {
	l, err := checkout.NewLinks([]byte(strings.Repeat("s", 32)), config.Checkout{PublicBaseURL: "https://pay.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2, 42, 1 << 40, math.MaxInt64} {
		tok := l.PayableToken(id)
		if len(tok) != checkout.TokenLen {
			t.Fatalf("token %q", tok)
		}
		if got, ok := l.PayableID(tok); !ok || got != id {
			t.Fatalf("PayableID(PayableToken(%d)) = %d, %v", id, got, ok)
		}
		if _, ok := l.IntentID(tok); ok {
			t.Fatalf("a payable's token %q names an intent", tok)
		}
		if l.PayablePageURL(id) != "https://pay.example.com/pay/p/"+tok {
			t.Fatalf("URL %q", l.PayablePageURL(id))
		}
		b := []byte(tok)
		b[5] ^= 1
		if _, ok := l.PayableID(string(b)); ok {
			t.Fatalf("a changed token %q names a payable", b)
		}
	}
	itok, _ := l.Token("pi_01JD3K7W9ZC8X5Q2R4T6V8Y0AB")
	if _, ok := l.PayableID(itok); ok {
		t.Fatal("an intent's token names a payable")
	}
	other, _ := checkout.NewLinks([]byte(strings.Repeat("t", 32)), config.Checkout{})
	if _, ok := other.PayableID(l.PayableToken(7)); ok {
		t.Fatal("another secret's token names a payable")
	}
}
