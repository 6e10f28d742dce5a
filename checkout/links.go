package checkout

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/paywatch/paywatch/config"
)

// MinSecret is the shortest secret NewLinks accepts, in bytes.
const MinSecret = 32

// TokenLen is the length of a page token: base64url of 32 bytes.
const TokenLen = 43

// ErrShortSecret is NewLinks' error for a secret under MinSecret bytes.
var ErrShortSecret = fmt.Errorf("the page secret must hold at least %d characters (e.g. `openssl rand -hex 32`)", MinSecret)

// Links makes and checks the capability URLs of payment pages. A token is
// the intent's 128-bit ULID encrypted with AES-256 (one block) followed by a
// 128-bit HMAC-SHA-256 tag of it, both keyed from the secret: nothing is
// stored, a token names exactly one intent, and without the secret a token
// can neither be computed from an intent id nor forged (a guess passes the
// tag with probability 2^-128). Reading an intent gives the same URL every
// time, on every instance that has the same secret.
type Links struct {
	base  string // the public base URL, without a trailing slash
	block cipher.Block
	mac   []byte
	hosts []string // allowed return hosts
	// payBlock and payMAC key the tokens of payables' pages: keys of
	// their own (another purpose in the derivation), so an intent's token
	// never names a payable nor the other way round.
	payBlock cipher.Block
	payMAC   []byte
	// shops are the stores' looks (SetShops).
	shops shopsHolder
}

// NewLinks returns the links of the configured page, keyed from secret.
func NewLinks(secret []byte, c config.Checkout) (*Links, error) {
	if len(secret) < MinSecret {
		return nil, ErrShortSecret
	}
	block, err := aes.NewCipher(derive(secret, "paywatch checkout page token: encryption"))
	if err != nil {
		return nil, err
	}
	payBlock, err := aes.NewCipher(derive(secret, "paywatch checkout payable page token: encryption"))
	if err != nil {
		return nil, err
	}
	return &Links{base: strings.TrimRight(c.PublicBaseURL, "/"), block: block,
		mac: derive(secret, "paywatch checkout page token: authentication"), hosts: c.ReturnHosts,
		payBlock: payBlock, payMAC: derive(secret, "paywatch checkout payable page token: authentication")}, nil
}

func derive(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

func (l *Links) tag(raw []byte) []byte { return tagOf(l.mac, raw) }

func tagOf(key, raw []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(raw)
	return m.Sum(nil)[:16]
}

// Token returns the page token of an intent id (pi_ and a ULID); false for
// an id not of that shape.
func (l *Links) Token(intentID string) (string, bool) {
	rest, ok := strings.CutPrefix(intentID, "pi_")
	if !ok {
		return "", false
	}
	id, err := ulid.ParseStrict(rest)
	if err != nil || id.String() != rest { // the canonical (upper-case) form only
		return "", false
	}
	var out [32]byte
	l.block.Encrypt(out[:16], id[:])
	copy(out[16:], l.tag(id[:]))
	return base64.RawURLEncoding.EncodeToString(out[:]), true
}

// Path returns the page's path (/pay/{token}), "" for an id not of an
// intent's shape.
func (l *Links) Path(intentID string) string {
	tok, ok := l.Token(intentID)
	if !ok {
		return ""
	}
	return "/pay/" + tok
}

// PageURL returns the page's full URL under the public base URL.
func (l *Links) PageURL(intentID string) string {
	p := l.Path(intentID)
	if p == "" {
		return ""
	}
	return l.base + p
}

// IntentID returns the intent a token names. The tag is compared in
// constant time; anything but a token Token made is false.
func (l *Links) IntentID(token string) (string, bool) {
	if len(token) != TokenLen {
		return "", false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) != 32 {
		return "", false
	}
	var id ulid.ULID
	l.block.Decrypt(id[:], raw[:16])
	if !hmac.Equal(raw[16:], l.tag(id[:])) {
		return "", false
	}
	return "pi_" + id.String(), true
}

// errReturnScheme and errReturnHost say why a return_url is refused.
var (
	errReturnScheme = errors.New("must be an absolute http(s) URL without credentials, spaces or quotes, at most 2000 characters")
	errReturnHost   = errors.New("points to a host that is not in checkout.return_hosts")
	// errStoreReturnHost: the store's own return hosts refused it.
	errStoreReturnHost = errors.New("points to a host that is not one of this store's return hosts")
)

// CheckReturnURL returns why raw cannot be the return button of a page of
// shop, or nil: it must be an http(s) URL to one of the store's return
// hosts, else of checkout.return_hosts.
func (l *Links) CheckReturnURL(shop, raw string) error {
	if len(raw) > 2000 || len(raw) < 8 || strings.ContainsFunc(raw, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || r == '"' || r == '\'' || r == '<' || r == '>' || r == '\\' || r == '`'
	}) {
		return errReturnScheme
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return errReturnScheme
	}
	if !allowedHost(l.returnHosts(shop), strings.ToLower(u.Host), strings.ToLower(u.Hostname())) {
		if sh, ok := l.shopOf(shop); ok && len(sh.ReturnHosts) > 0 {
			return fmt.Errorf("%w (%s)", errStoreReturnHost, u.Host)
		}
		return fmt.Errorf("%w (%s)", errReturnHost, u.Host)
	}
	return nil
}

// allowedHost matches host (with its port) and hostname against the
// allowed hosts: an entry with a port matches that host and port, one
// without matches the host on any port, "*.d" any host under d.
func allowedHost(hosts []string, host, name string) bool {
	for _, h := range hosts {
		switch {
		case strings.HasPrefix(h, "*."):
			if strings.HasSuffix(name, h[1:]) && len(name) > len(h)-1 {
				return true
			}
		case strings.Contains(strings.TrimPrefix(h, "["), "]:") || (!strings.HasPrefix(h, "[") && strings.Contains(h, ":")):
			if host == h {
				return true
			}
		default:
			if name == strings.Trim(h, "[]") {
				return true
			}
		}
	}
	return false
}

// CheckLocale returns why a storefront's locale is not a language of the
// page (CheckLocale) that shop offers, or nil.
func (l *Links) CheckLocale(shop, tag string) error {
	if err := CheckLocale(tag); err != nil {
		return err
	}
	offered := l.offered(shop)
	for _, o := range offered {
		if o.Tag == tag {
			return nil
		}
	}
	tags := make([]string, len(offered))
	for i, o := range offered {
		tags[i] = o.Tag
	}
	return fmt.Errorf("must be one of this store's page languages: %s", strings.Join(tags, ", "))
}

// payablePrefix is the path of payables' pages: /pay/p/{token}.
const payablePrefix = "/pay/p/"

// PayableToken returns the page token of a payable id: the id (8 bytes,
// after 8 zero bytes) encrypted and authenticated as an intent's is, with
// the payable keys.
func (l *Links) PayableToken(id int64) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[8:], uint64(id))
	var out [32]byte
	l.payBlock.Encrypt(out[:16], raw[:])
	copy(out[16:], tagOf(l.payMAC, raw[:]))
	return base64.RawURLEncoding.EncodeToString(out[:])
}

// PayablePath returns the path of a payable's page.
func (l *Links) PayablePath(id int64) string { return payablePrefix + l.PayableToken(id) }

// PayablePageURL returns the full URL of a payable's page.
func (l *Links) PayablePageURL(id int64) string { return l.base + l.PayablePath(id) }

// PayableID returns the payable a payable token names; anything but a
// token PayableToken made is false.
func (l *Links) PayableID(token string) (int64, bool) {
	if len(token) != TokenLen {
		return 0, false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) != 32 {
		return 0, false
	}
	var plain [16]byte
	l.payBlock.Decrypt(plain[:], raw[:16])
	if !hmac.Equal(raw[16:], tagOf(l.payMAC, plain[:])) || binary.BigEndian.Uint64(plain[:8]) != 0 {
		return 0, false
	}
	id := binary.BigEndian.Uint64(plain[8:])
	if id == 0 || id > math.MaxInt64 {
		return 0, false
	}
	return int64(id), true
}
