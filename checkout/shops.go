package checkout

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/text/language"

	"github.com/paywatch/paywatch/store"
)

// The stores' look (issue 34): the page of an intent or payable of a store
// shows the store's display name, logo and colour, offers only its
// languages, and a return_url must name one of its return hosts. Nothing
// on a page names another store, and a page's answer never depends on
// which other stores exist.

// SetShops gives the links (and so the pages and the payment core's
// checks) the stores as the daemon last read them. A store not given
// (created since) has the page's plain look, every language and
// checkout.return_hosts until the next call.
func (l *Links) SetShops(shops []store.Shop) {
	m := make(map[string]store.Shop, len(shops))
	for _, s := range shops {
		m[s.ID] = s
	}
	l.shops.Store(&m)
}

// shopOf is the store id's row, if SetShops gave it.
func (l *Links) shopOf(id string) (store.Shop, bool) {
	p := l.shops.Load()
	if p == nil {
		return store.Shop{}, false
	}
	s, ok := (*p)[store.StoreOr(id)]
	return s, ok
}

// offered is the page languages of a store: its own list, else all.
func (l *Links) offered(id string) []*Lang {
	sh, _ := l.shopOf(id)
	if len(sh.Languages) == 0 {
		return Languages()
	}
	var out []*Lang
	for _, o := range Languages() {
		if slices.Contains(sh.Languages, o.Tag) {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return Languages()
	}
	return out
}

// returnHosts are the hosts a return_url of a store may name: its own,
// else checkout.return_hosts.
func (l *Links) returnHosts(id string) []string {
	if sh, ok := l.shopOf(id); ok && len(sh.ReturnHosts) > 0 {
		return sh.ReturnHosts
	}
	return l.hosts
}

// shopsHolder is the stores' rows by id, as SetShops last gave them.
type shopsHolder = atomic.Pointer[map[string]store.Shop]

// langAmong picks the page's language among offered: explicit when it is
// one of them, else the best match of offered for an Accept-Language
// header, else the first offered (English when offered: the catalogue's
// first).
func langAmong(offered []*Lang, explicit, acceptLanguage string) *Lang {
	for _, o := range offered {
		if o.Tag == explicit {
			return o
		}
	}
	if len(acceptLanguage) > 512 {
		acceptLanguage = acceptLanguage[:512]
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err == nil && len(tags) > 0 {
		own := make([]language.Tag, len(offered))
		for i, o := range offered {
			own[i] = language.Make(o.Tag)
		}
		if _, i, conf := language.NewMatcher(own).Match(tags...); conf != language.No {
			return offered[i]
		}
	}
	return offered[0]
}

// logoHost is a logo's host as the CSP may name it.
var logoHost = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,252}[a-z0-9])?(:[0-9]{1,5})?$`)

// look is what a page shows of its store.
type look struct {
	// name is the shop's name as the page says it; "" for the page's
	// plain words ("the shop").
	name   string
	logo   string
	colour string
	langs  []*Lang
}

// lookOf is the look of the page of an intent or payable of store id.
func (p *Page) lookOf(id string) look {
	sh, _ := p.links.shopOf(id)
	lk := look{name: sh.DisplayName, colour: sh.Colour, langs: p.links.offered(id)}
	if store.StoreOr(id) == store.DefaultStore && lk.name == "" {
		// The default store's name is checkout.storefront_name, as before
		// stores; another store's page never shows it.
		lk.name = p.cfg.StorefrontName
	}
	if u, err := url.Parse(sh.LogoURL); sh.LogoURL != "" && err == nil && u.RawQuery == "" && u.Fragment == "" &&
		((u.Scheme == "https" && logoHost.MatchString(u.Host) && u.User == nil) || (u.Scheme == "" && u.Host == "" && strings.HasPrefix(u.Path, "/"))) {
		lk.logo = sh.LogoURL
	}
	return lk
}

// style is the page's inline style for the store's colour (validated
// #rrggbb, so nothing else), "" for none.
func (lk look) style() template.CSS {
	if lk.colour == "" {
		return ""
	}
	return template.CSS(":root{--shop:" + strings.ToLower(lk.colour) + "}")
}

// csp is the page's Content-Security-Policy for the look: base, with the
// inline style allowed by its hash and the logo's origin as an image
// source.
func (lk look) csp(base string) string {
	extra := map[string]string{}
	if s := lk.style(); s != "" {
		sum := sha256.Sum256([]byte(s))
		extra["style-src 'self'"] = "style-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	if u, err := url.Parse(lk.logo); lk.logo != "" && err == nil && u.Scheme == "https" {
		extra["img-src 'self'"] = "img-src 'self' https://" + u.Host
	}
	for from, to := range extra {
		base = strings.Replace(base, from+";", to+";", 1)
	}
	return base
}
