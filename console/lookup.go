package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

type searchData struct {
	Q    string
	Hits []searchHit
}

type searchHit struct {
	Kind, Label, Detail, Href, Store string
}

// search finds what one box names: an intent id or address, a transfer id
// or txid, a payable reference, or an account. One exact hit opens it.
func (c *Console) search(w http.ResponseWriter, r *http.Request, s *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	d := searchData{Q: q}
	if q != "" {
		if len(q) > 200 {
			c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: "search text must be at most 200 characters"})
			return
		}
		shop, ok := c.listStore(w, r, s)
		if !ok {
			return
		}
		hits, err := c.store.Search(r.Context(), shop, q)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		for _, h := range hits {
			sh := searchHit{Kind: h.Kind, Label: h.ID, Detail: h.Detail, Store: h.Store}
			switch h.Kind {
			case "intent":
				sh.Href = "/console/intents/" + url.PathEscape(h.ID)
			case "transfer":
				if !s.can(ScopeFinance) {
					continue
				}
				sh.Href = "/console/transfers/" + url.PathEscape(h.ID)
			case "payable":
				kind, ref, _ := strings.Cut(h.ID, "/")
				sh.Href = withStore(s, "/console/payables/"+url.PathEscape(kind)+"/"+url.PathEscape(ref), h.Store)
			case "account":
				if !s.can(ScopeFinance) {
					continue
				}
				sh.Href = withStore(s, "/console/balances?"+url.Values{"account": {h.ID}}.Encode(), h.Store)
			}
			d.Hits = append(d.Hits, sh)
		}
		if len(d.Hits) == 1 {
			http.Redirect(w, r, d.Hits[0].Href, http.StatusSeeOther)
			return
		}
	}
	c.render(w, r, http.StatusOK, "search", s, "Search", d)
}

// timelineItem is one line of an intent's history.
type timelineItem struct {
	At     time.Time
	Type   string
	Detail string
	Href   string
}

type intentData struct {
	In       views.Intent
	Timeline []timelineItem
	Others   []views.Intent
	Payable  *store.Payable
	Explorer map[string]string
}

func (c *Console) intent(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := c.visibleIntent(r, s, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := intentData{In: v, Explorer: map[string]string{}}
	var tids []string
	for _, t := range v.Transfers {
		tids = append(tids, t.ID)
		d.Explorer[t.ID] = c.explorer(t.Network, t.TxID)
	}
	evs, err := c.store.EventsOfIntent(r.Context(), v.ID, tids, 500)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, e := range evs {
		d.Timeline = append(d.Timeline, timelineItem{At: e.CreatedAt.UTC(), Type: string(e.Type), Detail: eventDetail(e)})
	}
	for _, t := range v.Transfers {
		// Confirmation milestones are not events: show where each transfer is.
		if t.BlockHeight != nil && t.Status != payment.TransferOrphaned {
			d.Timeline = append(d.Timeline, timelineItem{At: t.FirstSeenAt, Type: "confirmations",
				Detail: t.ID + ": " + itoa(t.Confirmations) + " of " + itoa(int64(t.Required)) + " confirmations (" + string(t.Status) + ")"})
		}
	}
	sort.SliceStable(d.Timeline, func(i, j int) bool { return d.Timeline[i].At.Before(d.Timeline[j].At) })
	p, err := c.store.PayableByReference(r.Context(), v.Store, string(v.Kind), v.Reference)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.internal(w, r, err)
		return
	}
	if err == nil {
		d.Payable = &p
		others, err := c.store.IntentsByPayable(r.Context(), p.ID)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		for _, o := range others {
			if o.ID == v.ID {
				continue
			}
			ov, err := c.svc.Get(r.Context(), o.ID)
			if err != nil {
				c.internal(w, r, err)
				return
			}
			d.Others = append(d.Others, ov)
		}
	}
	c.render(w, r, http.StatusOK, "intent", s, "Intent "+v.ID, d)
}

// eventDetail summarises an event's data in a few words.
func eventDetail(e store.Event) string {
	var v struct {
		Status         string `json:"status"`
		Classification string `json:"classification"`
		Amount         string `json:"amount"`
		AmountUSD      string `json:"amount_usd"`
		Network        string `json:"network"`
		Asset          string `json:"asset"`
		Resolution     *struct {
			Action, Note, Actor string
		} `json:"resolution"`
	}
	_ = json.Unmarshal(e.Data, &v)
	parts := []string{}
	if e.TransferID != "" {
		parts = append(parts, e.TransferID)
	}
	if v.Amount != "" && v.Asset != "" {
		parts = append(parts, v.Amount+" "+symbol(v.Network, v.Asset))
	} else if v.AmountUSD != "" {
		parts = append(parts, v.AmountUSD+" USD")
	}
	if v.Classification != "" && strings.HasPrefix(string(e.Type), "transfer.") {
		parts = append(parts, string(v.Classification))
	}
	if v.Resolution != nil {
		parts = append(parts, v.Resolution.Action+" by "+v.Resolution.Actor+": "+v.Resolution.Note)
	}
	return strings.Join(parts, " · ")
}

// visibleIntent is the intent id when the session may see it; another
// store's intent is "not found" exactly as one that does not exist.
func (c *Console) visibleIntent(r *http.Request, s *session, id string) (views.Intent, error) {
	v, err := c.svc.Get(r.Context(), id)
	if err == nil && !s.sees(v.Store) {
		return views.Intent{}, notFoundIntent(id)
	}
	return v, err
}

func (c *Console) intentQR(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := c.visibleIntent(r, s, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	png, err := qrcode.Encode(v.PaymentURI, qrcode.Medium, 256)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(png)
}

type payableData struct {
	P       store.Payable
	Intents []views.Intent
}

func (c *Console) payable(w http.ResponseWriter, r *http.Request, s *session) {
	kind, ref := r.PathValue("kind"), r.PathValue("reference")
	if !payment.PayableKind(kind).Valid() {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: "kind must be order or topup"})
		return
	}
	shop, ok := c.actStore(w, r, s)
	if !ok {
		return
	}
	p, err := c.store.PayableByReference(r.Context(), shop, kind, ref)
	if errors.Is(err, store.ErrNotFound) {
		c.render(w, r, http.StatusNotFound, "error", s, "Not found", errorData{Message: "no " + kind + " " + ref})
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	ins, err := c.store.IntentsByPayable(r.Context(), p.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	d := payableData{P: p}
	for _, in := range ins {
		v, err := c.svc.Get(r.Context(), in.ID)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		d.Intents = append(d.Intents, v)
	}
	c.render(w, r, http.StatusOK, "payable", s, kind+" "+ref, d)
}

func usd(cents int64) string { return payment.Cents(cents).String() }
