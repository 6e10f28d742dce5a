package reports

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// ReconRow is one transfer in the reconciliation report.
type ReconRow struct {
	TransferID      string                 `json:"transfer_id"`
	FirstSeenAt     time.Time              `json:"first_seen_at"`
	Network         string                 `json:"network"`
	Method          string                 `json:"method"`
	Asset           string                 `json:"asset"`
	TxID            string                 `json:"txid"`
	Index           int64                  `json:"index"`
	BlockHeight     *int64                 `json:"block_height"`
	Address         string                 `json:"address"`
	Amount          string                 `json:"amount"`
	AmountBaseUnits string                 `json:"amount_base_units"`
	USDAtLockedRate string                 `json:"usd_at_locked_rate"`
	IntentID        string                 `json:"intent_id"`
	IntentStatus    payment.IntentStatus   `json:"intent_status"`
	PayableKind     payment.PayableKind    `json:"payable_kind"`
	Payable         string                 `json:"payable_reference"`
	Account         string                 `json:"account"`
	Classification  payment.Classification `json:"classification"`
	Status          payment.TransferStatus `json:"status"`
	Confirmations   int64                  `json:"confirmations"`
	Settled         string                 `json:"settled_base_units"`
	Review          string                 `json:"review_base_units"`
	Resolved        string                 `json:"resolved_base_units"`
	Unresolved      string                 `json:"unresolved_base_units"`
	Excluded        bool                   `json:"excluded"`
	Resolution      string                 `json:"resolution"`
	ResolutionNote  string                 `json:"resolution_note"`
	ResolvedBy      string                 `json:"resolved_by"`
	ResolvedAt      *time.Time             `json:"resolved_at"`
	ResolutionUSD   string                 `json:"resolution_usd"`
	RefundTxID      string                 `json:"refund_txid"`
}

// MethodTotals sums one method's transfers in base units. Total is the sum
// of every transfer that is not excluded, and Total = Settled + Unresolved
// + Resolved exactly: Settled is what paid intents (a settles transfer
// whole, an overpaid one up to the intent's amount), Unresolved the
// reviewed parts (any other class, an overpayment's surplus) that finance
// has not decided, Resolved those it has. Excluded transfers (orphaned
// before they paid anything) are listed and counted apart.
type MethodTotals struct {
	Method            string `json:"method"`
	Decimals          int    `json:"decimals"`
	Transfers         int    `json:"transfers"`
	Total             string `json:"total_base_units"`
	Settled           string `json:"settled_base_units"`
	Unresolved        string `json:"unresolved_base_units"`
	Resolved          string `json:"resolved_base_units"`
	ExcludedTransfers int    `json:"excluded_transfers"`
	Excluded          string `json:"excluded_base_units"`
	TotalAmount       string `json:"total"`
	SettledAmount     string `json:"settled"`
	UnresolvedAmount  string `json:"unresolved"`
	ResolvedAmount    string `json:"resolved"`
}

// Reconciliation is GET /v1/reports/reconciliation: one row per transfer
// first seen in [From, To) (never per intent, so nothing counts twice) and
// the totals per method, as the records stood at AsOf. Closed is set in the
// stored report of a closed period.
type Reconciliation struct {
	From   time.Time      `json:"from"`
	To     time.Time      `json:"to"`
	AsOf   time.Time      `json:"as_of"`
	Closed *ReportClose   `json:"closed"`
	Rows   []ReconRow     `json:"rows"`
	Totals []MethodTotals `json:"totals"`
}

// Reconcile builds the reconciliation of transfers first seen in [from, to)
// as recorded up to asOf (the zero time: now): a transfer recorded later is
// left out, and each row shows the classification, status, block,
// confirmations, intent status and resolution the transfer had at asOf. A
// report as of a past time is therefore the same every time it is run.
// asOf may not be in the future. The report is shop's books: its
// transfers alone ("" is the default store).
func (s *Service) Reconcile(ctx context.Context, shop string, from, to, asOf time.Time) (Reconciliation, error) {
	reps, err := s.ReconcileEach(ctx, []string{shop}, from, to, asOf)
	if err != nil {
		return Reconciliation{}, err
	}
	return reps[0], nil
}

// ReconcileEach is Reconcile for each of shops (their reports in that
// order), with the rows of every store read in one round trip.
func (s *Service) ReconcileEach(ctx context.Context, shops []string, from, to, asOf time.Time) ([]Reconciliation, error) {
	if !to.After(from) {
		return nil, intents.Invalid("to", intents.InvalidRequest, "to must be after from")
	}
	now := s.now().UTC()
	if asOf.IsZero() {
		asOf = now
	}
	// The database keeps microseconds: a report says exactly which instant
	// it shows, so passing its as_of back reproduces it.
	asOf = asOf.UTC().Truncate(time.Microsecond)
	if asOf.After(now) {
		return nil, intents.Invalid("as_of", intents.InvalidRequest, "as_of %s is in the future (now is %s); a report shows what was recorded",
			asOf.Format(time.RFC3339Nano), now.Format(time.RFC3339))
	}
	each, err := s.store.ReconRowsEach(ctx, shops, from, to, asOf)
	if err != nil {
		return nil, err
	}
	reps := make([]Reconciliation, len(shops))
	for i, rows := range each {
		reps[i] = reconciliation(from, to, asOf, rows)
	}
	return reps, nil
}

// reconciliation is the report of rows, the transfers first seen in
// [from, to) as they stood at asOf.
func reconciliation(from, to, asOf time.Time, rows []store.ReconRow) Reconciliation {
	rep := Reconciliation{From: from.UTC(), To: to.UTC(), AsOf: asOf, Rows: []ReconRow{}, Totals: []MethodTotals{}}
	by := map[string]*methodSums{}
	for _, r := range rows {
		row, settled, resolved, unresolved := reconRow(r)
		rep.Rows = append(rep.Rows, row)
		sm := by[row.Method]
		if sm == nil {
			sm = newMethodSums(views.Decimals(r.Transfer.Network, r.Transfer.Asset))
			by[row.Method] = sm
		}
		sm.add(r.Transfer, settled, resolved, unresolved, row.Excluded)
	}
	names := make([]string, 0, len(by))
	for m := range by {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		rep.Totals = append(rep.Totals, by[m].totals(m))
	}
	return rep
}

// reconRow is the report's row of one transfer as it stood at the report's
// as-of time, with the parts of its amount (finance.Parts): what settled an
// intent, what finance's decisions cover, and the unresolved rest.
func reconRow(r store.ReconRow) (row ReconRow, settled, resolved, unresolved *big.Int) {
	t := r.Transfer
	method := t.Network + "/" + t.Asset
	if m, ok := payment.MethodFor(payment.Network(t.Network), payment.Asset(t.Asset)); ok {
		method = string(m.Method)
	}
	dec := views.Decimals(t.Network, t.Asset)
	settled, resolved, unresolved, excluded := finance.Parts(t)
	review := new(big.Int).Add(resolved, unresolved)
	row = ReconRow{TransferID: t.ID, FirstSeenAt: t.FirstSeenAt.UTC(), Network: t.Network, Method: method, Asset: payment.AssetName(payment.Network(t.Network), payment.Asset(t.Asset)),
		TxID: t.TxID, Index: t.Index, BlockHeight: t.BlockHeight, Address: t.Address,
		Amount: payment.FormatUnits(t.Amount, dec), AmountBaseUnits: t.Amount.String(),
		IntentID: t.IntentID, IntentStatus: r.IntentStatus, PayableKind: r.PayableKind, Payable: r.PayableRef, Account: r.Account,
		Classification: t.Classification, Status: t.Status, Settled: settled.String(), Review: review.String(),
		Resolved: resolved.String(), Unresolved: unresolved.String(), Excluded: excluded}
	if r.IntentRate != "" && r.Method == method {
		row.USDAtLockedRate = views.USDValue(t.Amount, r.IntentRate, dec).String()
	}
	if t.BlockHeight != nil && t.Status != payment.TransferOrphaned && r.NodeHeight >= *t.BlockHeight {
		row.Confirmations = r.NodeHeight - *t.BlockHeight + 1
	}
	if res := t.Resolution; res != nil {
		at := res.CreatedAt.UTC()
		row.Resolution, row.ResolutionNote, row.ResolvedBy, row.ResolvedAt, row.RefundTxID = res.Action, res.Note, res.Actor, &at, res.RefundTxID
		if res.AmountCents != nil {
			row.ResolutionUSD = payment.Cents(*res.AmountCents).String()
		}
	}
	return row, settled, resolved, unresolved
}

// methodSums adds up one method's transfers in base units (MethodTotals).
type methodSums struct {
	n, nx                                 int
	total, settled, unres, resolved, excl *big.Int
	dec                                   int
}

func newMethodSums(dec int) *methodSums {
	return &methodSums{total: new(big.Int), settled: new(big.Int), unres: new(big.Int), resolved: new(big.Int), excl: new(big.Int), dec: dec}
}

// add counts transfer t, whose amount splits into settled, resolved and
// unresolved (excluded: counted apart).
func (sm *methodSums) add(t store.Transfer, settled, resolved, unresolved *big.Int, excluded bool) {
	sm.n++
	if excluded {
		sm.nx++
		sm.excl.Add(sm.excl, t.Amount)
		return
	}
	sm.total.Add(sm.total, t.Amount)
	sm.settled.Add(sm.settled, settled)
	sm.resolved.Add(sm.resolved, resolved)
	sm.unres.Add(sm.unres, unresolved)
}

// totals is the sums as the report's totals of method m.
func (sm *methodSums) totals(m string) MethodTotals {
	return MethodTotals{Method: m, Decimals: sm.dec, Transfers: sm.n,
		Total: sm.total.String(), Settled: sm.settled.String(), Unresolved: sm.unres.String(), Resolved: sm.resolved.String(),
		ExcludedTransfers: sm.nx, Excluded: sm.excl.String(),
		TotalAmount: payment.FormatUnits(sm.total, sm.dec), SettledAmount: payment.FormatUnits(sm.settled, sm.dec),
		UnresolvedAmount: payment.FormatUnits(sm.unres, sm.dec), ResolvedAmount: payment.FormatUnits(sm.resolved, sm.dec)}
}

// ReconCSVHeader is the header row of the reconciliation CSV.
var ReconCSVHeader = []string{"transfer_id", "first_seen_at", "network", "method", "asset", "txid", "index", "block_height",
	"address", "amount", "amount_base_units", "usd_at_locked_rate", "intent_id", "intent_status", "payable_kind",
	"payable_reference", "account", "classification", "status", "confirmations", "settled_base_units",
	"review_base_units", "resolved_base_units", "unresolved_base_units", "excluded", "resolution", "resolution_note", "resolved_by", "resolved_at", "resolution_usd", "refund_txid"}

// WriteCSV writes the report's rows as CSV: a header, then exactly one row
// per transfer (totals are in the JSON format). Text that a spreadsheet
// would run as a formula is prefixed with a quote.
func (r Reconciliation) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ReconCSVHeader); err != nil {
		return err
	}
	for _, x := range r.Rows {
		height, resolvedAt := "", ""
		if x.BlockHeight != nil {
			height = strconv.FormatInt(*x.BlockHeight, 10)
		}
		if x.ResolvedAt != nil {
			resolvedAt = x.ResolvedAt.Format(time.RFC3339)
		}
		// Text cells are guarded (txids, addresses and references come from
		// outside); numbers, times and booleans this code formats are
		// written as they are, so an ETH native transfer's index -1 stays
		// the number -1.
		g := safeCell
		rec := []string{g(x.TransferID), x.FirstSeenAt.Format(time.RFC3339Nano), g(x.Network), g(x.Method), g(x.Asset), g(x.TxID),
			strconv.FormatInt(x.Index, 10), height, g(x.Address), x.Amount, x.AmountBaseUnits, x.USDAtLockedRate, g(x.IntentID),
			g(string(x.IntentStatus)), g(string(x.PayableKind)), g(x.Payable), g(x.Account), g(string(x.Classification)), g(string(x.Status)),
			strconv.FormatInt(x.Confirmations, 10), x.Settled, x.Review, x.Resolved, x.Unresolved, strconv.FormatBool(x.Excluded), g(x.Resolution),
			g(x.ResolutionNote), g(x.ResolvedBy), resolvedAt, x.ResolutionUSD, g(x.RefundTxID)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// safeCell defuses spreadsheet formulas in text: a cell whose first
// character after blanks (spaces, tabs, line breaks, no-break and
// zero-width spaces, byte order marks) is one a spreadsheet starts a formula
// with (= + - @, their full-width forms, tab, carriage return) is prefixed
// with a quote, which spreadsheets show as text. Spreadsheets skip leading
// blanks before deciding, so looking at the first byte only is not enough.
func safeCell(s string) string {
	if s != "" && strings.ContainsRune("\t\r", rune(s[0])) {
		return "'" + s
	}
	t := strings.TrimLeftFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
	if r, _ := utf8.DecodeRuneInString(t); t != "" && strings.ContainsRune("=+-@\uff1d\uff0b\uff0d\uff20", r) {
		return "'" + s
	}
	return s
}

// ParseReportTime parses a report bound: a date (2026-11-01, midnight UTC)
// or an RFC 3339 time.
func ParseReportTime(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2026-11-01) nor an RFC 3339 time", s)
	}
	return t, nil
}

// ReportClose is a closed reporting period (POST /v1/reports/closes): the
// reconciliation of [From, To) as of AsOf, stored when ClosedBy closed it
// and served as stored from then on.
type ReportClose struct {
	ID       string    `json:"id"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	AsOf     time.Time `json:"as_of"`
	ClosedBy string    `json:"closed_by"`
	ClosedAt time.Time `json:"closed_at"`
}

func reportCloseOf(c store.ReportClose) ReportClose {
	return ReportClose{ID: c.ID, From: c.From.UTC(), To: c.To.UTC(), AsOf: c.AsOf.UTC(), ClosedBy: c.ClosedBy, ClosedAt: c.ClosedAt.UTC()}
}

// Report formats.
const (
	FormatJSON = "json"
	FormatCSV  = "csv"
)

// RenderReconciliation renders the reconciliation of [from, to) as JSON
// (rows and totals) or CSV (one row per transfer). With a zero asOf, a
// closed period is served exactly as stored when it was closed (closed is
// then set), any other period as of now; with asOf, the report as of that
// time is computed, closed or not. It is shop's report, and a close is
// shop's close.
func (s *Service) RenderReconciliation(ctx context.Context, shop string, from, to, asOf time.Time, format string) (body []byte, closed *ReportClose, err error) {
	if format != FormatJSON && format != FormatCSV {
		return nil, nil, intents.Invalid("format", intents.InvalidRequest, "format must be csv or json")
	}
	if asOf.IsZero() {
		c, err := s.store.ReportCloseByPeriod(ctx, shop, from, to)
		switch {
		case err == nil:
			rc := reportCloseOf(c)
			if format == FormatCSV {
				return c.CSV, &rc, nil
			}
			return c.JSON, &rc, nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, nil, err
		}
	}
	rep, err := s.Reconcile(ctx, shop, from, to, asOf)
	if err != nil {
		return nil, nil, err
	}
	body, err = rep.render(format)
	return body, nil, err
}

func (r Reconciliation) render(format string) ([]byte, error) {
	if format == FormatJSON {
		return json.Marshal(r)
	}
	var buf bytes.Buffer
	err := r.WriteCSV(&buf)
	return buf.Bytes(), err
}

// ClosePeriod closes the reporting period [from, to): its reconciliation
// as of now is stored, JSON and CSV, and served as stored from then on
// (RenderReconciliation without as_of). The period must have ended. Closing
// a period again returns the first close (created false) and stores
// nothing; a closed period is never reopened or changed (the table refuses
// it), so what finance filed stays what paywatch serves. actor is who
// closed it (the API key name, or "cli:<user>"). Each store closes its own
// books: shop's period is closed ("" is the default store).
func (s *Service) ClosePeriod(ctx context.Context, shop string, from, to time.Time, actor string) (ReportClose, bool, error) {
	shop = store.StoreOr(shop)
	from, to = from.UTC(), to.UTC()
	if actor == "" {
		return ReportClose{}, false, intents.Fail(intents.InvalidRequest, "closing a period needs an actor")
	}
	if c, err := s.store.ReportCloseByPeriod(ctx, shop, from, to); err == nil {
		return reportCloseOf(c), false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return ReportClose{}, false, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if !to.After(from) {
		return ReportClose{}, false, intents.Invalid("to", intents.InvalidRequest, "to must be after from")
	}
	if to.After(now) {
		return ReportClose{}, false, intents.Fail(intents.InvalidRequest, "the period ends at %s, after now (%s): only a period that has ended can be closed",
			to.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	rep, err := s.Reconcile(ctx, shop, from, to, now)
	if err != nil {
		return ReportClose{}, false, err
	}
	rc := ReportClose{ID: store.NewID("rc"), From: from, To: to, AsOf: rep.AsOf, ClosedBy: actor, ClosedAt: now}
	rep.Closed = &rc
	js, err := rep.render(FormatJSON)
	if err != nil {
		return ReportClose{}, false, err
	}
	cs, err := rep.render(FormatCSV)
	if err != nil {
		return ReportClose{}, false, err
	}
	stored, created, err := s.store.InsertReportClose(ctx, store.ReportClose{ID: rc.ID, Store: shop, From: from, To: to, AsOf: rc.AsOf,
		ClosedBy: actor, ClosedAt: now, JSON: js, CSV: cs})
	if err != nil {
		return ReportClose{}, false, err
	}
	if created {
		s.log.Info("report period closed", "id", rc.ID, "store", shop, "from", from, "to", to, "actor", actor)
	}
	return reportCloseOf(stored), created, nil
}

// ReportCloses lists shop's closed periods, oldest first.
func (s *Service) ReportCloses(ctx context.Context, shop string) ([]ReportClose, error) {
	cs, err := s.store.ReportCloses(ctx, shop)
	if err != nil {
		return nil, err
	}
	out := make([]ReportClose, 0, len(cs))
	for _, c := range cs {
		out = append(out, reportCloseOf(c))
	}
	return out, nil
}
