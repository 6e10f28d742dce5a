package checkout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math/big"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

//go:embed ui/*.html
var uiFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Intents is what the page reads and records: an intent as the API shows
// it, and the customer's "I have paid" through the very rule of POST
// /v1/intents/{id}/report (a report, not a confirmation; the first time is
// kept). *intents.Service implements it.
type Intents interface {
	Reader
	Report(ctx context.Context, id string) (views.Intent, error)
}

// Options wires a Page.
type Options struct {
	Intents Intents
	Feed    Feed
	// Wake wakes the live hub; the store's notifier on the event channel.
	Wake  Waker
	Links *Links
	// Config is the daemon's config: checkout, and each network's chain
	// (a test network is said so on the page).
	Config *config.Config
	// Payables serves payables' pages (/pay/p/{token}); nil: none.
	Payables Payables
	// Clock is the page's clock; nil is the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
}

// Page serves the hosted payment pages under /pay/.
type Page struct {
	in      Intents
	links   *Links
	cfg     config.Checkout
	chains  map[string]string // network → chain, for the test-network notice
	now     func() time.Time
	log     *slog.Logger
	hub     *Hub
	files   http.Handler
	static  map[string]bool // the names of the static files
	tmpl    *template.Template
	csp     string
	frameOK bool
	proxies []netip.Prefix
	limit   *rateLimiter
	live    liveCounts
	version string // of the static files, for their URLs
	// payables and enabled: payables' pages and the methods they offer.
	payables Payables
	enabled  map[string]bool
}

// New returns the page handler; Run runs its live hub.
func New(opt Options) (*Page, error) {
	opt.Log = logs.Or(opt.Log)
	opt.Clock = clock.Or(opt.Clock)
	c := opt.Config.Checkout
	p := &Page{in: opt.Intents, links: opt.Links, cfg: c, chains: map[string]string{}, now: opt.Clock.Now,
		log: opt.Log.With("component", "checkout"), limit: newRateLimiter(c.RequestsPerMinute),
		live: liveCounts{max: c.MaxLive, per: c.MaxLivePerClient, perPage: c.MaxLivePerPage, by: map[liveKey]int{}}}
	p.payables, p.enabled = opt.Payables, map[string]bool{}
	for m, mc := range opt.Config.Methods {
		if mc != nil && mc.Enabled {
			p.enabled[string(m)] = true
		}
	}
	for n, nc := range opt.Config.Networks {
		p.chains[string(n)] = nc.Chain
	}
	p.proxies = c.Proxies()
	p.hub = NewHub(opt.Feed, opt.Wake, opt.Intents, c.ProgressInterval.Duration, p.log)
	t, err := template.New("").ParseFS(uiFiles, "ui/*.html")
	if err != nil {
		return nil, fmt.Errorf("checkout templates: %w", err)
	}
	p.tmpl = t
	h := sha256.New()
	p.static = map[string]bool{}
	if err := fs.WalkDir(staticFiles, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFiles.ReadFile(path)
		h.Write(b)
		p.static[strings.TrimPrefix(path, "static/")] = true
		return err
	}); err != nil {
		return nil, err
	}
	p.version = hex.EncodeToString(h.Sum(nil))[:12]
	frame := "'none'"
	if len(c.FrameAncestors) > 0 {
		frame, p.frameOK = strings.Join(c.FrameAncestors, " "), true
	}
	p.csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"form-action 'self'; frame-ancestors " + frame + "; base-uri 'none'"
	static, _ := fs.Sub(staticFiles, "static")
	p.files = http.FileServerFS(static)
	return p, nil
}

// Run runs the live hub until ctx ends (nil then): open live connections
// end with it.
func (p *Page) Run(ctx context.Context) error { return p.hub.Run(ctx) }

// Hub returns the page's live hub.
func (p *Page) Hub() *Hub { return p.hub }

// Live returns the number of open live connections.
func (p *Page) Live() int { return p.live.Open() }

// route dispatches /pay/static/{file}, GET /pay/{token}, GET
// /pay/{token}/live and POST /pay/{token}/report; anything else under
// /pay/ is the plain 404.
func (p *Page) route(w http.ResponseWriter, r *http.Request) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/pay/")
	first, action, sub := strings.Cut(rest, "/")
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	if first == "static" && get && p.static[action] {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + action
		p.files.ServeHTTP(w, r2)
		return
	}
	client := clientOf(r, p.proxies)
	if !p.limit.allow(client, p.now()) {
		w.Header().Set("Retry-After", "60")
		p.message(w, r, http.StatusTooManyRequests, "limited")
		return
	}
	if first == "p" {
		// A payable's page: /pay/p/{token}, POST /pay/p/{token}/choose.
		tok, act, hasAct := strings.Cut(action, "/")
		switch {
		case sub && !hasAct && get:
			p.payable(w, r, tok)
		case hasAct && act == "choose" && r.Method == http.MethodPost:
			p.choose(w, r, tok)
		default:
			p.notFound(w, r)
		}
		return
	}
	switch {
	case !sub && get:
		p.page(w, r, first)
	case action == "live" && r.Method == http.MethodGet:
		p.stream(w, r, first, client)
	case action == "report" && r.Method == http.MethodPost:
		p.report(w, r, first)
	default:
		p.notFound(w, r)
	}
}

// ServeHTTP serves /pay/ with the page's security headers: a strict CSP
// (no inline script or style), no framing unless configured, no referrer
// (the URL is a capability), no caching of anything but the static files,
// and no cookies at all.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", p.csp)
	if !p.frameOK {
		hd.Set("X-Frame-Options", "DENY")
	}
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	p.route(w, r)
}

// intent resolves a request's token to its intent, within the link's
// lifetime; false means a plain 404 was written (or an error page).
func (p *Page) intent(w http.ResponseWriter, r *http.Request, token string) (views.Intent, bool) {
	id, ok := p.links.IntentID(token)
	if !ok {
		p.notFound(w, r)
		return views.Intent{}, false
	}
	v, err := p.in.Get(r.Context(), id)
	if intents.KindOf(err) == intents.NotFound {
		p.notFound(w, r)
		return views.Intent{}, false
	}
	if err != nil {
		p.internal(w, r, err)
		return views.Intent{}, false
	}
	if p.now().After(v.ExpiresAt.Add(p.cfg.LinkLifetime.Duration)) {
		p.notFound(w, r)
		return views.Intent{}, false
	}
	return v, true
}

func (p *Page) page(w http.ResponseWriter, r *http.Request, token string) {
	v, ok := p.intent(w, r, token)
	if !ok {
		return
	}
	l := p.pageLang(r, v.Store, v.Locale)
	d, err := p.pageData(v, l, token)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	if d.Parts.Open {
		d.Change = p.changeLink(r.Context(), v, l)
	}
	w.Header().Set("Content-Language", l.Tag)
	w.Header().Set("Vary", "Accept-Language")
	w.Header().Set("Content-Security-Policy", p.lookOf(v.Store).csp(p.csp))
	p.render(w, r, http.StatusOK, "page", d)
}

// report records the customer's "I have paid" and shows the page again.
func (p *Page) report(w http.ResponseWriter, r *http.Request, token string) {
	v, ok := p.intent(w, r, token)
	if !ok {
		return
	}
	if _, err := p.in.Report(r.Context(), v.ID); intents.KindOf(err) == intents.NotFound {
		p.notFound(w, r)
		return
	} else if err != nil {
		p.internal(w, r, err)
		return
	}
	back := "/pay/" + token
	if q := r.URL.Query().Get("lang"); CheckLocale(q) == nil {
		back += "?lang=" + q
	}
	http.Redirect(w, r, back+"#status", http.StatusSeeOther)
}

// pageLang is the language a page speaks: the customer's choice on the
// page (?lang=, the language switch), else the storefront's (the intent's
// locale), else the browser's (Accept-Language), else English.
func pageLang(r *http.Request, locale string) *Lang {
	if q := r.URL.Query().Get("lang"); CheckLocale(q) == nil {
		return langs[q]
	}
	return LangOf(locale, r.Header.Get("Accept-Language"))
}

// pageLang is pageLang among the languages the page's store offers.
func (p *Page) pageLang(r *http.Request, shop, locale string) *Lang {
	offered := p.links.offered(shop)
	for _, o := range offered {
		if q := r.URL.Query().Get("lang"); o.Tag == q {
			return o
		}
	}
	return langAmong(offered, locale, r.Header.Get("Accept-Language"))
}

func (p *Page) notFound(w http.ResponseWriter, r *http.Request) {
	p.message(w, r, http.StatusNotFound, "notfound")
}

// internal answers our failure without its text (the log has it).
func (p *Page) internal(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	if store.IsUnavailable(err) {
		// A database failover: the customer tries again in a moment.
		p.log.Warn("payment page failed: database unavailable", "method", r.Method, "path", redactPath(r.URL.Path), "err", err)
		w.Header().Set("Retry-After", "5")
		p.message(w, r, http.StatusServiceUnavailable, "error")
		return
	}
	p.log.Error("payment page failed", "method", r.Method, "path", redactPath(r.URL.Path), "err", err)
	p.message(w, r, http.StatusInternalServerError, "error")
}

// redactPath keeps a page path's token out of the log: it is a capability.
func redactPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/pay/"); ok && len(rest) >= TokenLen {
		return "/pay/" + rest[:6] + "…" + rest[TokenLen:]
	}
	return path
}

type messageData struct {
	L       *Lang
	Title   string
	Body    string
	Version string
}

// message writes a plain page of one title and text: the same page for
// every unknown, forged or expired token.
func (p *Page) message(w http.ResponseWriter, r *http.Request, status int, key string) {
	l := pageLang(r, "")
	p.render(w, r, status, "message", messageData{L: l, Title: l.T(key + ".title"), Body: l.T(key + ".body"), Version: p.version})
}

func (p *Page) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		p.log.Error("payment page template failed", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// pageData is everything the page template shows: built from the
// intent's view field by field, so nothing else of the intent (account,
// ids, transfers' details) can reach the page.
type pageData struct {
	L     *Lang
	Title string
	Shop  string
	// Logo is the store's logo URL ("" for none); Style its colour, an
	// inline style the CSP allows by its hash.
	Logo     string
	Style    template.CSS
	What     string
	USD      string
	Testnet  string
	Version  string
	Now      string
	LivePath string
	Parts    parts
	// Langs is the language switch: each language's link.
	Langs []langLink
	// Change links the payable's page to pay with another method ("" for
	// none).
	Change string
}

// langLink is one language of the switch.
type langLink struct {
	Tag, Name, Href string
	Current         bool
}

// parts is what changes with the intent's state, rendered: the status and
// the instructions, as the page shows them and a live message carries them.
type parts struct {
	State Phase
	// Open: the instructions are shown.
	Open   bool
	Title  string
	Status template.HTML
	Pay    template.HTML
	// AtDeadline is the status the page shows once the deadline passes
	// while it is open, if nothing arrives meanwhile, and its title: the
	// page's script swaps it in at the deadline, in one step with hiding
	// the instructions ("" when not open).
	AtDeadline      template.HTML
	AtDeadlineTitle string
	AtDeadlineState Phase
	// ID identifies what they show (a stream does not send it again).
	ID string
}

// payData is the instructions: what to send, where, until when.
type payData struct {
	L           *Lang
	MethodName  string
	Warning     string
	Symbol      string
	AmountLabel string // message key
	Amount      string // as it must be sent (what the copy button copies)
	AmountShown string // in the language's way
	// AddressGroups is the address in groups of four characters, so that
	// it wraps between groups, never hiding one.
	AddressGroups []string
	Address       string
	URI           template.URL // the wallet link and the QR code's text; "" for none
	QR            qrSVG
	Rate          string
	Deadline      string // RFC 3339, for the countdown
	DeadlineAt    string // in words
	Left          string
	// Hints are what keeps a payment from being lost, where they apply.
	Hints []string
	// Report is the "I have paid" form's action, when offered.
	Report string
}

// shop is the name a page of store id says: the store's display name (for
// the default store, else checkout.storefront_name), else "the shop".
func (p *Page) shop(id string, l *Lang) string {
	if n := p.lookOf(id).name; n != "" {
		return n
	}
	return l.T("shop.default")
}

func (p *Page) title(id string, l *Lang) string {
	if n := p.lookOf(id).name; n != "" {
		return l.T("page.title.shop", "shop", n)
	}
	return l.T("page.title")
}

func (p *Page) pageData(v views.Intent, l *Lang, token string) (pageData, error) {
	now := p.now()
	pt, err := p.parts(v, l, token, now)
	if err != nil {
		return pageData{}, err
	}
	lk := p.lookOf(v.Store)
	d := pageData{L: l, Title: p.title(v.Store, l), Shop: p.shop(v.Store, l), Logo: lk.logo, Style: lk.style(), What: l.T("page."+string(v.Kind), "reference", v.Reference),
		USD: l.USD(v.AmountUSD), Version: p.version, Now: now.UTC().Format(time.RFC3339Nano),
		LivePath: "/pay/" + token + "/live?lang=" + l.Tag, Parts: pt}
	for _, o := range lk.langs {
		d.Langs = append(d.Langs, langLink{Tag: o.Tag, Name: o.T("lang.name"), Href: "/pay/" + token + "?lang=" + o.Tag, Current: o == l})
	}
	if chain := p.chains[v.Network]; chain != "" && chain != "mainnet" {
		d.Testnet = l.T("page.testnet", "chain", chain)
	}
	return d, nil
}

// parts renders the status and the instructions of v at now.
func (p *Page) parts(v views.Intent, l *Lang, token string, now time.Time) (parts, error) {
	st := StateOf(v, now)
	m, ok := payment.LookupMethod(payment.Method(v.Method))
	if !ok {
		return parts{}, fmt.Errorf("intent of unknown method %q", v.Method)
	}
	pd := payData{L: l, MethodName: l.T("method." + v.Method), Warning: l.T("warn." + v.Method), Symbol: m.Symbol,
		AmountLabel: "pay.send", Amount: payment.TrimUnits(units(v.AmountBaseUnits), m.Decimals), Address: v.Address,
		URI: walletURI(v.PaymentURI), Rate: v.Rate.USDPerUnit, Deadline: v.ExpiresAt.UTC().Format(time.RFC3339),
		DeadlineAt: l.Time(v.ExpiresAt), Left: l.Duration(v.ExpiresAt.Sub(now)), Hints: hints(l, m),
		AddressGroups: groups(v.Address, 4)}
	pd.Rate = l.Decimal(pd.Rate)
	if st.Phase == Underpaid {
		// Ask for the rest, not the whole amount again.
		rest := new(big.Int).Sub(units(v.AmountBaseUnits), units(v.ReceivedBaseUnits))
		pd.AmountLabel, pd.Amount = "pay.send.rest", payment.TrimUnits(rest, m.Decimals)
		pd.URI = walletURI(restURI(v.PaymentURI, units(v.AmountBaseUnits), rest, m.Decimals))
	}
	pd.AmountShown = l.Decimal(pd.Amount)
	if !st.Open {
		pd.URI = "" // the instructions are hidden: no QR code to draw
	}
	if pd.URI != "" {
		qr, err := qrOf(string(pd.URI))
		if err != nil {
			return parts{}, fmt.Errorf("QR code: %w", err)
		}
		pd.QR = qr
	}
	if st.CanReport && !st.Reported {
		pd.Report = "/pay/" + token + "/report?lang=" + l.Tag
	}
	sd := p.statusOf(v, st, l, token)
	var sb, pb bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&sb, "status", sd); err != nil {
		return parts{}, err
	}
	if err := p.tmpl.ExecuteTemplate(&pb, "pay", pd); err != nil {
		return parts{}, err
	}
	pt := parts{State: st.Phase, Open: st.Open, Title: sd.Title + " · " + p.title(v.Store, l),
		Status: template.HTML(sb.String()), Pay: template.HTML(pb.String()), // rendered by html/template
		ID: fingerprint(st.Phase, st.Open, sb.String(), pd.Amount, string(pd.URI), pd.Report)}
	if st.Open {
		// What the page will say just after the deadline if nothing more
		// arrives: the same rule (StateOf) a moment later.
		after := v.ExpiresAt.Add(time.Second)
		if now.After(after) {
			after = now
		}
		ast := StateOf(v, after)
		ad := p.statusOf(v, ast, l, token)
		var ab bytes.Buffer
		if err := p.tmpl.ExecuteTemplate(&ab, "status", ad); err != nil {
			return parts{}, err
		}
		pt.AtDeadline, pt.AtDeadlineTitle, pt.AtDeadlineState = template.HTML(ab.String()), ad.Title+" · "+p.title(v.Store, l), ast.Phase
	}
	return pt, nil
}

// hints are the advice that keeps a payment of method m from being lost,
// where it applies: the fee currency a token transfer burns, and what an
// exchange withdrawal does to the amount.
func hints(l *Lang, m payment.MethodInfo) []string {
	var out []string
	switch {
	case m.Network == payment.Tron && m.Asset != payment.Native:
		out = append(out, l.T("hint.trx_energy"))
	case m.Network == payment.Ethereum && m.Asset != payment.Native:
		out = append(out, l.T("hint.eth_gas", "symbol", m.Symbol))
	}
	return append(out, l.T("hint.exchange", "method", l.T("method."+string(m.Method))))
}

// groups cuts s into groups of n characters (the last may be shorter).
func groups(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// restURI is a payment URI for rest instead of full: the URI's amount
// parameter (amount= as a decimal, value= or uint256= in base units)
// replaced; "" when the URI holds neither form of full.
func restURI(uri string, full, rest *big.Int, decimals int) string {
	base, query, ok := strings.Cut(uri, "?")
	if !ok || rest.Sign() <= 0 {
		return ""
	}
	params := strings.Split(query, "&")
	for i, kv := range params {
		k, val, _ := strings.Cut(kv, "=")
		switch {
		case k == "amount" && val == payment.TrimUnits(full, decimals):
			params[i] = k + "=" + payment.TrimUnits(rest, decimals)
		case (k == "value" || k == "uint256") && val == full.String():
			params[i] = k + "=" + rest.String()
		default:
			continue
		}
		return base + "?" + strings.Join(params, "&")
	}
	return ""
}

// walletURI returns a payment URI as a link target when its scheme is one
// of the payment schemes the API gives (html/template refuses others).
func walletURI(uri string) template.URL {
	for _, s := range []string{"bitcoin:", "litecoin:", "ethereum:", "tron:", "solana:"} {
		if strings.HasPrefix(uri, s) && !strings.ContainsAny(uri, "\"'<> ") {
			return template.URL(uri)
		}
	}
	return ""
}

// statusData is the live part of the page: what the state means and what
// to do next, in the page's language.
type statusData struct {
	L       *Lang
	Phase   Phase
	Title   string
	Lines   []string
	Notes   []string
	Confirm *confirmData
	Return  string
	Renew   string
	NewPage string
	Contact bool
	// ContactURL links "contact the shop" when configured.
	ContactURL  string
	ContactText string
	Reported    string
	Shop        string
	// Receipt is the summary of a paid intent, to keep.
	Receipt *receiptData
}

// receiptData is what a customer keeps once paid: nothing private (no
// account, no internal id), only what the page showed and the chain holds.
type receiptData struct {
	Shop, What, USD, Method, Received, Rate string
	PaidAt                                  string // in words, UTC
	PaidAtISO                               string // RFC 3339, for the customer's clock
	Txs                                     []receiptTx
}

type receiptTx struct {
	TxID, Confirmations string
}

type confirmData struct {
	N, Required int64
}

func (p *Page) statusOf(v views.Intent, st State, l *Lang, token string) statusData {
	shop := p.shop(v.Store, l)
	m, _ := payment.LookupMethod(payment.Method(v.Method))
	sym := m.Symbol
	what := l.T("what."+string(v.Kind), "reference", v.Reference)
	s := statusData{L: l, Phase: st.Phase, Shop: shop, ContactText: l.T("contact.link", "shop", shop)}
	if u := p.cfg.ContactURL; u != "" {
		s.ContactURL = u
	}
	deadline := l.Time(v.ExpiresAt)
	switch st.Phase {
	case Waiting:
		s.Title = l.T("state.waiting.title")
		s.Lines = []string{l.T("state.waiting.body")}
	case Confirming:
		s.Title = l.T("state.confirming.title")
		switch {
		case st.Required == 0:
			s.Lines = []string{l.T("state.confirming.finality")}
		case st.Pending:
			s.Lines = []string{l.T("state.confirming.pending", "required", st.Required)}
			s.Confirm = &confirmData{N: 0, Required: int64(st.Required)}
		default:
			s.Lines = []string{l.T("state.confirming.count", "n", st.Confirmations, "required", st.Required)}
			s.Confirm = &confirmData{N: st.Confirmations, Required: int64(st.Required)}
		}
		if st.Required > 0 {
			s.Lines = append(s.Lines, l.T("state.confirming.body", "required", st.Required))
		}
	case Underpaid:
		s.Title = l.T("state.underpaid.title")
		s.Lines = []string{l.T("state.underpaid.body", "received", l.Decimal(st.Received), "missing", l.Decimal(st.Missing), "symbol", sym),
			l.T("state.underpaid.next", "missing", l.Decimal(st.Missing), "symbol", sym, "time", deadline)}
	case Paid:
		s.Title = l.T("state.paid.title")
		s.Lines = []string{l.T("state.paid.body", "shop", shop, "amount", l.Decimal(st.Received), "symbol", sym, "what", what)}
		s.Receipt = p.receiptOf(v, st, l, shop, what)
		if v.ReturnURL != "" && p.links.CheckReturnURL(v.Store, v.ReturnURL) == nil {
			s.Return = v.ReturnURL
		}
	case Expired:
		s.Title = l.T("state.expired.title")
		s.Lines = []string{l.T("state.expired.body")}
		if p.cfg.RenewURL != "" {
			s.Renew = renewURL(p.cfg.RenewURL, v)
		} else {
			s.Contact = true
		}
	case Review:
		s.Title = l.T("state.review.title")
		key := "state.review." + string(st.Reason)
		s.Lines = []string{l.T(key, "received", l.Decimal(st.Received), "asset", st.Asset, "missing", l.Decimal(st.Missing), "symbol", sym,
			"method", l.T("method."+v.Method), "what", what), l.T("state.review.held", "shop", shop)}
		if st.Open {
			s.Lines = append(s.Lines, l.T("state.review.still", "method", l.T("method."+v.Method),
				"amount", l.Decimal(payment.TrimUnits(units(v.AmountBaseUnits), m.Decimals)), "symbol", sym))
		}
		s.Contact = true
	case Renewed:
		s.Title = l.T("state.renewed.title")
		s.Lines = []string{l.T("state.renewed.body")}
		if v.SupersededBy != nil {
			s.NewPage = p.links.Path(*v.SupersededBy)
		}
	case Reverted:
		s.Title = l.T("state.reverted.title")
		s.Lines = []string{l.T("state.reverted.body", "shop", shop)}
		s.Contact = true
	}
	for _, n := range st.Notes {
		s.Notes = append(s.Notes, l.T("note."+string(n.Reason), "amount", l.Decimal(n.Amount), "asset", n.Asset, "shop", shop))
	}
	if st.Reported && v.ReportedAt != nil && st.Phase != Paid {
		s.Reported = l.T("report.done", "time", l.Time(*v.ReportedAt))
	}
	return s
}

// renewURL fills the configured renewal link's {kind} and {reference}.
func renewURL(tmpl string, v views.Intent) string {
	return strings.NewReplacer("{kind}", url.QueryEscape(string(v.Kind)), "{reference}", url.QueryEscape(v.Reference)).Replace(tmpl)
}

// receiptOf is the receipt of paid intent v: the transfers that pay it
// with their confirmations, the time paid and the locked rate.
func (p *Page) receiptOf(v views.Intent, st State, l *Lang, shop, what string) *receiptData {
	m, _ := payment.LookupMethod(payment.Method(v.Method))
	rc := &receiptData{Shop: shop, What: what, USD: l.USD(v.AmountUSD) + " USD", Method: l.T("method." + v.Method),
		Received: l.Decimal(st.Received) + " " + m.Symbol, Rate: "1 " + m.Symbol + " = " + l.Decimal(v.Rate.USDPerUnit) + " USD"}
	if v.PaidAt != nil {
		rc.PaidAt, rc.PaidAtISO = l.Time(*v.PaidAt), v.PaidAt.UTC().Format(time.RFC3339)
	}
	for _, t := range v.Transfers {
		if t.Status == payment.TransferOrphaned {
			continue
		}
		switch t.Classification {
		case payment.Settles, payment.Overpaid, payment.Partial:
			rc.Txs = append(rc.Txs, receiptTx{TxID: t.TxID, Confirmations: l.T("receipt.confirmations", "n", t.Confirmations)})
		}
	}
	return rc
}
