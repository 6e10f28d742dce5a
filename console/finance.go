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
	// Store is the store shown ("": every store, an every-store key's
	// default).
	Store    string
	Networks []payment.Network
	Classes  []string
	Ages     []struct{ Value, Label string }
	Counts   []classCount
	Total    int64
	Rows     []inboxRow
	Next     string
	Query    url.Values
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
	shop, ok := c.listStore(w, r, s)
	if !ok {
		return
	}
	d.Store = shop
	f := store.InboxFilter{Status: d.Status, Network: d.Network, Classification: d.Class, After: q.Get("after"),
		Limit: InboxPageSize, SeenAfter: after, SeenBefore: before, Store: shop}
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
	return usdOfUnits(t, in, t.AmountBaseUnits)
}

// usdOfUnits values units (base units of the transfer's asset, a decimal
// string) at the transfer's intent's locked rate; "" without one.
func usdOfUnits(t views.Transfer, in *store.Intent, units string) string {
	if in == nil || in.Network != t.Network || in.Rate == "" {
		return ""
	}
	n, ok := new(big.Int).SetString(units, 10)
	if !ok {
		return ""
	}
	// t names its asset as the API does (BTC), in as stored (native).
	m, ok := payment.MethodFor(payment.Network(t.Network), payment.Asset(t.Asset))
	if !ok || string(m.Method) != in.Method {
		return ""
	}
	return views.USDValue(n, in.Rate, m.Decimals).String()
}

// paysIntent reports whether part of the transfer already pays its intent
// (an overpayment): crediting an intent with it is refused, and what is
// left to decide is its surplus.
func paysIntent(t views.Transfer) bool {
	return t.IntentID != nil && t.Settled != "" && t.Settled != "0"
}

// amount is a part of a transfer in the asset's units and, at the intent's
// locked rate, in USD ("" without one).
type amount struct {
	Amount, USD string
}

// partOf renders units (base units of the transfer's asset, a decimal
// string) as an amount; ok is false for a malformed value.
func partOf(row inboxRow, units string) (amount, bool) {
	t := row.T
	n, ok := new(big.Int).SetString(units, 10)
	if !ok {
		return amount{}, false
	}
	return amount{Amount: payment.FormatUnits(n, views.Decimals(t.Network, t.Asset)) + " " + symbol(t.Network, t.Asset),
		USD: usdOfUnits(t, row.Intent, n.String())}, true
}

// surplusOf is an overpayment's surplus: what of the transfer is more than
// the part that pays its intent.
func surplusOf(row inboxRow) amount {
	total, ok1 := new(big.Int).SetString(row.T.AmountBaseUnits, 10)
	settled, ok2 := new(big.Int).SetString(row.T.Settled, 10)
	if !ok1 || !ok2 {
		return amount{}
	}
	a, _ := partOf(row, new(big.Int).Sub(total, settled).String())
	return a
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
	// PaysIntent marks an overpayment: part of it pays its intent, and
	// Surplus is the rest, what the clerk decides on.
	PaysIntent bool
	Surplus    amount
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
	// What is decided is what is left to decide: the whole transfer, or
	// an overpayment's surplus (the rest already pays its intent).
	left, ok := partOf(row, t.Unresolved)
	if !ok {
		left = amount{Amount: t.Amount + " " + symbol(t.Network, t.Asset), USD: row.USD}
	}
	what, value := left.Amount, left.Amount
	if left.USD != "" {
		value = left.USD + " USD"
	}
	var out []actionInfo
	if paysIntent(t) {
		// Crediting an intent is refused for a transfer that already pays
		// one (finance: "already pays intent"): the form is not offered.
		value += ", the surplus over intent " + *t.IntentID + ","
	} else {
		intent := "the intent you name"
		if t.IntentID != nil {
			intent = *t.IntentID
		}
		out = append(out, actionInfo{finance.ActionCreditIntent, "Credit an intent", "Counts " + what + " toward " + intent +
			": it may become paid, and a top-up is then credited to its account."})
	}
	return append(out,
		actionInfo{finance.ActionCreditAccount, "Credit an account", "Credits " + value + " to the account you name" +
			" (the reviewed part at the intent's locked rate, or the rate you give)."},
		actionInfo{finance.ActionRefunded, "Refunded", "Records that " + what + " was sent back in the refund transaction you give; nothing is credited."},
		actionInfo{finance.ActionIgnore, "Ignore", "Records that " + what + " is ignored (dust, spam); nothing is credited."},
	)
}

// loadTransfer is transfer id as the session may see it: another store's
// transfer is ErrNotFound, as one that does not exist.
func (c *Console) loadTransfer(r *http.Request, s *session, id string) (inboxRow, error) {
	t, err := c.store.GetTransfer(r.Context(), id)
	if err != nil {
		return inboxRow{}, err
	}
	if !s.sees(t.Store) {
		return inboxRow{}, store.ErrNotFound
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
	row, err := c.loadTransfer(r, s, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		c.render(w, r, http.StatusNotFound, "error", s, "Not found", errorData{Message: "no transfer " + r.PathValue("id")})
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	pays := paysIntent(row.T)
	if form.IntentID == "" && row.T.IntentID != nil && !pays {
		form.IntentID = *row.T.IntentID
	}
	if form.Account == "" && row.Intent != nil {
		form.Account = row.Intent.Account
	}
	acts := c.actions(row)
	if form.Action == "" {
		// The first form offered opens: for an overpayment, crediting an
		// account with the surplus, not the intent it already pays.
		form.Action = acts[0].Action
	}
	d := transferData{Row: row, Form: form, Error: msg, Done: r.URL.Query().Get("done") == "1", Actions: acts, PaysIntent: pays}
	if pays {
		d.Surplus = surplusOf(row)
	}
	c.render(w, r, status, "transfer", s, "Transfer "+row.T.ID, d)
}

// resolve records a decision through the same service call as POST
// /v1/transfers/{id}/resolve; the actor is the signed-in key's name.
func (c *Console) resolve(w http.ResponseWriter, r *http.Request, s *session) {
	form := resolveForm{Action: r.PostFormValue("action"), Note: r.PostFormValue("note"), IntentID: strings.TrimSpace(r.PostFormValue("intent_id")),
		Account: strings.TrimSpace(r.PostFormValue("account")), RefundTxID: strings.TrimSpace(r.PostFormValue("refund_txid")),
		USDPerUnit: strings.TrimSpace(r.PostFormValue("usd_per_unit")), OverrideReason: strings.TrimSpace(r.PostFormValue("override_reason"))}
	// Another store's transfer is not found, as an unknown one, before
	// anything is decided (a transfer's store never changes).
	if _, err := c.loadTransfer(r, s, r.PathValue("id")); err != nil {
		c.renderTransfer(w, r, s, http.StatusNotFound, form, "") // the 404 (or the error) of the transfer page
		return
	}
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
	// Store is the store whose books are shown.
	Store          string
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
	if q.Get(storeParam) != "" {
		v.Set(storeParam, q.Get(storeParam))
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
	shop, ok := c.actStore(w, r, s)
	if !ok {
		return
	}
	d.Store = shop
	body, closed, err := c.reports.RenderReconciliation(r.Context(), shop, from, to, asOf, reports.FormatJSON)
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
	shop, ok := c.actStore(w, r, s)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	body, _, err := c.reports.RenderReconciliation(r.Context(), shop, from, to, asOf, format)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	ctype := "application/json"
	if format == reports.FormatCSV {
		ctype = "text/csv; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	name := "reconciliation-"
	if s.ownStore() == "" && shop != store.DefaultStore {
		name += shop + "-" // shop is a store id: [a-z0-9_-]
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+from.Format("20060102")+`-`+to.Format("20060102")+`.`+format+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

type balanceData struct {
	// Store is the account's store (an account is a name per store); the
	// list's store filter ("": every store) without an account.
	Store   string
	Account string
	Balance *finance.BalanceView
	Ledger  finance.LedgerPage
	Next    string
	// Without an account: the accounts whose name contains Search, at
	// most accountsShown of them (More when there are more).
	Search   string
	Accounts []accountRow
	More     bool
}

type accountRow struct {
	Store, Account, BalanceUSD string
	UpdatedAt                  *time.Time
}

// accountsShown caps the balances page's account list; the search box
// narrows it.
const accountsShown = 200

func (c *Console) balances(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := balanceData{Account: strings.TrimSpace(q.Get("account")), Search: strings.TrimSpace(q.Get("q"))}
	if d.Account == "" {
		shop, ok := c.listStore(w, r, s)
		if !ok {
			return
		}
		d.Store = shop
		as, err := c.store.Accounts(r.Context(), shop, d.Search, accountsShown+1)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		if len(as) > accountsShown {
			as, d.More = as[:accountsShown], true
		}
		for _, a := range as {
			d.Accounts = append(d.Accounts, accountRow{Store: a.Store, Account: a.Account, BalanceUSD: payment.Cents(a.BalanceCents).String(), UpdatedAt: a.UpdatedAt})
		}
	}
	if d.Account != "" {
		shop, ok := c.actStore(w, r, s)
		if !ok {
			return
		}
		d.Store = shop
		b, err := c.finance.Balance(r.Context(), shop, d.Account)
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
		d.Balance = &b
		if d.Ledger, err = c.finance.Ledger(r.Context(), shop, d.Account, q.Get("after"), 100); err != nil {
			c.fail(w, r, s, err)
			return
		}
		if d.Ledger.Next != nil {
			d.Next = withStore(s, "/console/balances?"+url.Values{"account": {d.Account}, "after": {*d.Ledger.Next}}.Encode(), shop)
		}
	}
	c.render(w, r, http.StatusOK, "balances", s, "Balances", d)
}
