package console

import (
	"encoding/json"
	"errors"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/views"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
)

// InboxPageSize is how many transfers one inbox page shows.
const InboxPageSize = 100

// classifications in the order the inbox counts them (every one of
// payment.Classifications, in the console's order).
var classifications = names(payment.Late, payment.Partial, payment.Overpaid, payment.Duplicate, payment.WrongAsset,
	payment.UnknownAddress, payment.Dust, payment.Unexplained, payment.Reverted, payment.Settles)

func names(cs ...payment.Classification) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

// ages are the inbox's age filters.
var ages = []struct{ Value, Label string }{
	{"", "any age"}, {"1h", "< 1 hour"}, {"24h", "< 24 hours"}, {"7d", "< 7 days"}, {"old", "≥ 7 days"},
}

// inboxRow is one transfer of the inbox with its intent.
type inboxRow struct {
	T        views.Transfer
	USD      string // at the intent's locked rate, "" without one
	Intent   *store.Intent
	Explorer string
}

type inboxData struct {
	Status, Network, Class, Age string
	Networks                    []payment.Network
	Classes                     []string
	Ages                        []struct{ Value, Label string }
	Counts                      []classCount
	Total                       int64
	Rows                        []inboxRow
	Next                        string
	Query                       url.Values
}

type classCount struct {
	Class string
	N     int64
}

// ageBounds turns an age filter into first-seen bounds.
func ageBounds(age string, now time.Time) (after, before *time.Time, ok bool) {
	at := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	switch age {
	case "":
		return nil, nil, true
	case "1h":
		return at(time.Hour), nil, true
	case "24h":
		return at(24 * time.Hour), nil, true
	case "7d":
		return at(7 * 24 * time.Hour), nil, true
	case "old":
		return nil, at(7 * 24 * time.Hour), true
	}
	return nil, nil, false
}

func (c *Console) inbox(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := inboxData{Status: q.Get("status"), Network: q.Get("network"), Class: q.Get("classification"), Age: q.Get("age"),
		Networks: payment.Networks, Classes: classifications, Ages: ages}
	if d.Status == "" {
		d.Status = "unresolved"
	}
	after, before, ok := ageBounds(d.Age, c.now())
	if !ok {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: "age must be 1h, 24h, 7d or old"})
		return
	}
	f := store.InboxFilter{Status: d.Status, Network: d.Network, Classification: d.Class, After: q.Get("after"),
		Limit: InboxPageSize, SeenAfter: after, SeenBefore: before}
	pg, err := c.finance.Inbox(r.Context(), f)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	counts, err := c.store.InboxCounts(r.Context(), f)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, cl := range classifications {
		if n := counts[cl]; n > 0 {
			d.Counts = append(d.Counts, classCount{cl, n})
			d.Total += n
		}
	}
	if d.Rows, err = c.inboxRows(r, pg.Transfers); err != nil {
		c.internal(w, r, err)
		return
	}
	if pg.Next != nil {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("after", *pg.Next)
		d.Next = "/console/inbox?" + nq.Encode()
	}
	d.Query = q
	c.render(w, r, http.StatusOK, "inbox", s, "Inbox", d)
}

// inboxRows adds each transfer's intent (one query for the page) and its
// USD value at that intent's locked rate.
func (c *Console) inboxRows(r *http.Request, ts []views.Transfer) ([]inboxRow, error) {
	var ids []string
	for _, t := range ts {
		if t.IntentID != nil {
			ids = append(ids, *t.IntentID)
		}
	}
	ins, err := c.store.IntentsByIDs(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	by := map[string]*store.Intent{}
	for i := range ins {
		by[ins[i].ID] = &ins[i]
	}
	rows := make([]inboxRow, 0, len(ts))
	for _, t := range ts {
		row := inboxRow{T: t, Explorer: c.explorer(t.Network, t.TxID)}
		if t.IntentID != nil {
			row.Intent = by[*t.IntentID]
		}
		row.USD = usdOf(t, row.Intent)
		rows = append(rows, row)
	}
	return rows, nil
}

// usdOf values a transfer at its intent's locked rate, when it is in that
// intent's asset.
func usdOf(t views.Transfer, in *store.Intent) string {
	if in == nil || in.Network != t.Network || in.Rate == "" {
		return ""
	}
	units, ok := new(big.Int).SetString(t.AmountBaseUnits, 10)
	if !ok {
		return ""
	}
	// t names its asset as the API does (BTC), in as stored (native).
	m, ok := payment.MethodFor(payment.Network(t.Network), payment.Asset(t.Asset))
	if !ok || string(m.Method) != in.Method {
		return ""
	}
	return views.USDValue(units, in.Rate, m.Decimals).String()
}

func (c *Console) explorer(network, txid string) string {
	tmpl := c.cfg.Console.Explorers[network]
	if tmpl == "" || strings.HasPrefix(txid, "balance:") {
		return ""
	}
	return strings.ReplaceAll(tmpl, "{txid}", url.PathEscape(txid))
}

// transferData is the transfer page: the transfer, its intent, and the
// resolve forms.
type transferData struct {
	Row     inboxRow
	Form    resolveForm
	Error   string
	Done    bool
	Actions []actionInfo
}

type resolveForm struct {
	Action, Note, IntentID, Account, RefundTxID, USDPerUnit string
	// OverrideReason, when set, accepts a usd_per_unit the rate book does
	// not confirm (finance.Override): credited up to the configured
	// maximum, logged and evented as an override.
	OverrideReason string
}

// actionInfo describes one resolve action: what it will do, in a sentence.
type actionInfo struct {
	Action, Label, Says string
}

func (c *Console) actions(row inboxRow) []actionInfo {
	t := row.T
	amount := t.Amount + " " + symbol(t.Network, t.Asset)
	value := amount
	if row.USD != "" {
		value = row.USD + " USD"
	}
	intent := "the intent you name"
	if t.IntentID != nil {
		intent = *t.IntentID
	}
	return []actionInfo{
		{finance.ActionCreditIntent, "Credit an intent", "Counts " + amount + " toward " + intent +
			": it may become paid, and a top-up is then credited to its account."},
		{finance.ActionCreditAccount, "Credit an account", "Credits " + value + " to the account you name" +
			" (the reviewed part at the intent's locked rate, or the rate you give)."},
		{finance.ActionRefunded, "Refunded", "Records that " + amount + " was sent back in the refund transaction you give; nothing is credited."},
		{finance.ActionIgnore, "Ignore", "Records that " + amount + " is ignored (dust, spam); nothing is credited."},
	}
}

func (c *Console) loadTransfer(r *http.Request, id string) (inboxRow, error) {
	t, err := c.store.GetTransfer(r.Context(), id)
	if err != nil {
		return inboxRow{}, err
	}
	tip, err := c.store.NodeHeight(r.Context(), t.Network)
	if err != nil {
		return inboxRow{}, err
	}
	rows, err := c.inboxRows(r, []views.Transfer{views.TransferOf(t, tip)})
	if err != nil {
		return inboxRow{}, err
	}
	return rows[0], nil
}

func (c *Console) transfer(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderTransfer(w, r, s, http.StatusOK, resolveForm{IntentID: "", Action: r.URL.Query().Get("action")}, "")
}

func (c *Console) renderTransfer(w http.ResponseWriter, r *http.Request, s *session, status int, form resolveForm, msg string) {
	row, err := c.loadTransfer(r, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		c.render(w, r, http.StatusNotFound, "error", s, "Not found", errorData{Message: "no transfer " + r.PathValue("id")})
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if form.IntentID == "" && row.T.IntentID != nil {
		form.IntentID = *row.T.IntentID
	}
	if form.Account == "" && row.Intent != nil {
		form.Account = row.Intent.Account
	}
	c.render(w, r, status, "transfer", s, "Transfer "+row.T.ID, transferData{Row: row, Form: form, Error: msg,
		Done: r.URL.Query().Get("done") == "1", Actions: c.actions(row)})
}

// resolve records a decision through the same service call as POST
// /v1/transfers/{id}/resolve; the actor is the signed-in key's name.
func (c *Console) resolve(w http.ResponseWriter, r *http.Request, s *session) {
	form := resolveForm{Action: r.PostFormValue("action"), Note: r.PostFormValue("note"), IntentID: strings.TrimSpace(r.PostFormValue("intent_id")),
		Account: strings.TrimSpace(r.PostFormValue("account")), RefundTxID: strings.TrimSpace(r.PostFormValue("refund_txid")),
		USDPerUnit: strings.TrimSpace(r.PostFormValue("usd_per_unit")), OverrideReason: strings.TrimSpace(r.PostFormValue("override_reason"))}
	req := finance.ResolveRequest{Action: form.Action, Note: form.Note}
	switch form.Action {
	case finance.ActionCreditIntent:
		req.IntentID = form.IntentID
	case finance.ActionCreditAccount:
		req.Account, req.USDPerUnit = form.Account, form.USDPerUnit
		if form.OverrideReason != "" {
			req.Override = &finance.Override{Reason: form.OverrideReason}
		}
	case finance.ActionRefunded:
		req.RefundTxID = form.RefundTxID
	}
	_, err := c.finance.Resolve(r.Context(), r.PathValue("id"), req, s.key.Name, nil)
	var e *intents.Error
	if errors.As(err, &e) {
		c.renderTransfer(w, r, s, api.StatusOf(e.Kind), form, e.Message)
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.log.Info("console resolution", "key", s.key.Name, "transfer", r.PathValue("id"), "action", form.Action)
	http.Redirect(w, r, "/console/transfers/"+url.PathEscape(r.PathValue("id"))+"?done=1", http.StatusSeeOther)
}

// reconData is the reconciliation page.
type reconData struct {
	From, To, AsOf string
	Rep            reports.Reconciliation
	Closed         *reports.ReportClose
	Checks         map[string]bool
	Chart          chart
	Rows           []reports.ReconRow
	More           int
	Query          string
}

// reconRowsShown caps the rows listed on screen (the downloads have all).
const reconRowsShown = 500

// reconRange reads from, to (default: this month so far) and as_of
// (default: none, so a closed period is shown as stored).
func (c *Console) reconRange(r *http.Request) (from, to, asOf time.Time, d reconData, err error) {
	q := r.URL.Query()
	now := c.now().UTC()
	d.From, d.To, d.AsOf = q.Get("from"), q.Get("to"), q.Get("as_of")
	if d.From == "" {
		d.From = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
	}
	if d.To == "" {
		d.To = now.AddDate(0, 0, 1).Format("2006-01-02")
	}
	if from, err = reports.ParseReportTime(d.From); err != nil {
		return from, to, asOf, d, errors.New("from: " + err.Error())
	}
	if to, err = reports.ParseReportTime(d.To); err != nil {
		return from, to, asOf, d, errors.New("to: " + err.Error())
	}
	if d.AsOf != "" {
		if asOf, err = reports.ParseReportTime(d.AsOf); err != nil {
			return from, to, asOf, d, errors.New("as_of: " + err.Error())
		}
	}
	v := url.Values{"from": {d.From}, "to": {d.To}}
	if d.AsOf != "" {
		v.Set("as_of", d.AsOf)
	}
	d.Query = v.Encode()
	return from, to, asOf, d, nil
}

// reconciliation shows the report GET /v1/reports/reconciliation serves
// (the same service call: a closed period as stored, else as of as_of or
// now), with the per-method identity checked on screen.
func (c *Console) reconciliation(w http.ResponseWriter, r *http.Request, s *session) {
	from, to, asOf, d, err := c.reconRange(r)
	if err != nil {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: err.Error()})
		return
	}
	body, closed, err := c.reports.RenderReconciliation(r.Context(), from, to, asOf, reports.FormatJSON)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	if err := json.Unmarshal(body, &d.Rep); err != nil {
		c.internal(w, r, err)
		return
	}
	d.Closed, d.Checks, d.Rows = closed, map[string]bool{}, d.Rep.Rows
	for _, t := range d.Rep.Totals {
		d.Checks[t.Method] = identityHolds(t)
	}
	if len(d.Rows) > reconRowsShown {
		d.More = len(d.Rows) - reconRowsShown
		d.Rows = d.Rows[:reconRowsShown]
	}
	d.Chart = reconChart(d.Rep.Totals)
	c.render(w, r, http.StatusOK, "reconciliation", s, "Reconciliation", d)
}

// identityHolds checks total = settled + unresolved + resolved to the base
// unit, the invariant the screen shows.
func identityHolds(t reports.MethodTotals) bool {
	var sum, total big.Int
	for _, v := range []string{t.Settled, t.Unresolved, t.Resolved} {
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			return false
		}
		sum.Add(&sum, n)
	}
	if _, ok := total.SetString(t.Total, 10); !ok {
		return false
	}
	return sum.Cmp(&total) == 0
}

// reconciliationDownload serves exactly the bytes GET
// /v1/reports/reconciliation serves (JSON or CSV).
func (c *Console) reconciliationDownload(w http.ResponseWriter, r *http.Request, s *session) {
	from, to, asOf, _, err := c.reconRange(r)
	if err != nil {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: err.Error()})
		return
	}
	format := r.URL.Query().Get("format")
	body, _, err := c.reports.RenderReconciliation(r.Context(), from, to, asOf, format)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	ctype := "application/json"
	if format == reports.FormatCSV {
		ctype = "text/csv; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="reconciliation-`+from.Format("20060102")+`-`+to.Format("20060102")+`.`+format+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

type balanceData struct {
	Account string
	Balance *finance.BalanceView
	Ledger  finance.LedgerPage
	Next    string
}

func (c *Console) balances(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := balanceData{Account: strings.TrimSpace(q.Get("account"))}
	if d.Account != "" {
		b, err := c.finance.Balance(r.Context(), d.Account)
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
		d.Balance = &b
		if d.Ledger, err = c.finance.Ledger(r.Context(), d.Account, q.Get("after"), 100); err != nil {
			c.fail(w, r, s, err)
			return
		}
		if d.Ledger.Next != nil {
			d.Next = "/console/balances?" + url.Values{"account": {d.Account}, "after": {*d.Ledger.Next}}.Encode()
		}
	}
	c.render(w, r, http.StatusOK, "balances", s, "Balances", d)
}
