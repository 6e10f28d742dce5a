package checkout

import (
	"context"
	"html/template"
	"net/http"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// Payables is what a payable's page reads and does: the payable with its
// open intents, and the customer's choice of method, which makes the
// intent (through the creation path) or replaces the open one of another
// method. *intents.Service implements it.
type Payables interface {
	PagePayable(ctx context.Context, id int64) (intents.PagePayable, error)
	PagePayableOf(ctx context.Context, shop string, kind payment.PayableKind, reference string) (intents.PagePayable, error)
	Choose(ctx context.Context, payableID int64, method string) (views.Intent, error)
}

// chooseData is the method choice of a payable's page.
type chooseData struct {
	L        *Lang
	Title    string
	Shop     string
	Logo     string
	Style    template.CSS
	What     string
	USD      string
	Version  string
	Action   string // the form's action
	Methods  []methodChoice
	Current  string // the method of the open intent, "" for none
	Back     string // the open intent's page, "" for none
	Refused  string // why the last choice was refused, in words
	Langs    []langLink
	Network  string
	Payments bool // a payment was already seen: no change
}

// methodChoice is one enabled method, its network in words.
type methodChoice struct {
	Method, Name, Warning string
	Current               bool
}

// payable serves GET /pay/p/{token}: a paid payable's paying intent's
// page, the open intent's page (unless ?change=1), else the choice of
// method.
func (p *Page) payable(w http.ResponseWriter, r *http.Request, token string) {
	pp, ok := p.pagePayable(w, r, token)
	if !ok {
		return
	}
	l := p.pageLang(r, pp.Payable.Store, pp.Payable.Locale)
	lang := "?lang=" + l.Tag
	if pp.PaidBy != "" {
		http.Redirect(w, r, p.links.Path(pp.PaidBy)+lang, http.StatusSeeOther)
		return
	}
	if len(pp.Open) > 0 && r.URL.Query().Get("change") == "" {
		http.Redirect(w, r, p.links.Path(pp.Open[len(pp.Open)-1].ID)+lang, http.StatusSeeOther)
		return
	}
	p.renderChoice(w, r, http.StatusOK, pp, l, token, "")
}

// choose serves POST /pay/p/{token}/choose (form field method): the
// intent of the method, then its page.
func (p *Page) choose(w http.ResponseWriter, r *http.Request, token string) {
	pp, ok := p.pagePayable(w, r, token)
	if !ok {
		return
	}
	l := p.pageLang(r, pp.Payable.Store, pp.Payable.Locale)
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	method := r.PostFormValue("method")
	if _, known := payment.LookupMethod(payment.Method(method)); !known || !p.enabled[method] {
		p.renderChoice(w, r, http.StatusBadRequest, pp, l, token, l.T("choose.unknown"))
		return
	}
	v, err := p.payables.Choose(r.Context(), pp.ID, method)
	switch intents.KindOf(err) {
	case "":
	case intents.Conflict, intents.TooManyOpenIntents:
		p.renderChoice(w, r, http.StatusConflict, pp, l, token, l.T("choose.seen"))
		return
	case intents.NotFound:
		p.notFound(w, r)
		return
	case intents.MethodDisabled, intents.UnknownMethod, intents.InvalidAmount, intents.ChainUnavailable, intents.RateUnavailable, intents.AddressPoolEmpty:
		p.renderChoice(w, r, http.StatusServiceUnavailable, pp, l, token, l.T("choose.unavailable", "method", l.T("method."+method)))
		return
	default:
		p.internal(w, r, err)
		return
	}
	http.Redirect(w, r, p.links.Path(v.ID)+"?lang="+l.Tag, http.StatusSeeOther)
}

// pagePayable resolves a payable token; false means a 404 (or an error
// page) was written.
func (p *Page) pagePayable(w http.ResponseWriter, r *http.Request, token string) (intents.PagePayable, bool) {
	id, ok := p.links.PayableID(token)
	if !ok || p.payables == nil {
		p.notFound(w, r)
		return intents.PagePayable{}, false
	}
	pp, err := p.payables.PagePayable(r.Context(), id)
	if intents.KindOf(err) == intents.NotFound {
		p.notFound(w, r)
		return intents.PagePayable{}, false
	}
	if err != nil {
		p.internal(w, r, err)
		return intents.PagePayable{}, false
	}
	return pp, true
}

func (p *Page) renderChoice(w http.ResponseWriter, r *http.Request, status int, pp intents.PagePayable, l *Lang, token, refused string) {
	lk := p.lookOf(pp.Payable.Store)
	d := chooseData{L: l, Title: l.T("choose.title") + " · " + p.title(pp.Payable.Store, l), Shop: p.shop(pp.Payable.Store, l), Logo: lk.logo, Style: lk.style(),
		What: l.T("page."+string(pp.Payable.Kind), "reference", pp.Payable.Reference), USD: l.USD(pp.Payable.AmountUSD),
		Version: p.version, Action: payablePrefix + token + "/choose?lang=" + l.Tag, Refused: refused}
	if n := len(pp.Open); n > 0 {
		d.Current, d.Back = pp.Open[n-1].Method, p.links.Path(pp.Open[n-1].ID)+"?lang="+l.Tag
		d.Payments = seenOn(pp.Open[n-1])
	}
	for _, m := range payment.Methods {
		if !p.enabled[string(m.Method)] {
			continue
		}
		network := "choose.network." + string(m.Network)
		if m.Asset != payment.Native {
			network += ".token" // ERC-20, TRC-20
		}
		d.Methods = append(d.Methods, methodChoice{Method: string(m.Method), Name: l.T("method." + string(m.Method)),
			Warning: l.T(network), Current: string(m.Method) == d.Current})
	}
	for _, o := range lk.langs {
		href := payablePrefix + token + "?lang=" + o.Tag
		if d.Current != "" {
			href += "&change=1"
		}
		d.Langs = append(d.Langs, langLink{Tag: o.Tag, Name: o.T("lang.name"), Href: href, Current: o == l})
	}
	w.Header().Set("Content-Language", l.Tag)
	w.Header().Set("Vary", "Accept-Language")
	w.Header().Set("Content-Security-Policy", lk.csp(p.csp))
	p.render(w, r, status, "choose", d)
}

// seenOn reports whether a payment was seen on v (it is then paid there,
// not replaced).
func seenOn(v views.Intent) bool {
	return v.Status != payment.IntentAwaiting || v.ReceivedBaseUnits != "0" || len(v.Transfers) > 0
}

// changeLink is the intent page's "pay with another method" link when v
// belongs to a payable's page and nothing was seen on it yet; "" else.
func (p *Page) changeLink(ctx context.Context, v views.Intent, l *Lang) string {
	if p.payables == nil || seenOn(v) {
		return ""
	}
	pp, err := p.payables.PagePayableOf(ctx, v.Store, v.Kind, v.Reference)
	if err != nil {
		return "" // no page of its own, or a failed read: no link
	}
	return p.links.PayablePath(pp.ID) + "?change=1&lang=" + l.Tag
}
