package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
	"github.com/paywatch/paywatch/webhooks"
)

func (s *Server) listTransfers(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	limit, ok := limitParam(w, r, 100, 1000)
	if !ok {
		return
	}
	// A store's key lists its store's transfers (another store's cursor is
	// as unknown as a made-up one); an every-store key, the store
	// Paywatch-Store names, else every store's.
	shop, ok := s.listStore(w, r, key)
	if !ok {
		return
	}
	q := r.URL.Query()
	after, err := queryID(r, "after", "tr")
	if err != nil {
		writeEdge(w, err)
		return
	}
	page, err := s.finance.Inbox(r.Context(), store.InboxFilter{Status: q.Get("status"), Network: q.Get("network"),
		Classification: q.Get("classification"), After: after, Limit: limit, Store: shop})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, 200, page)
}

func (s *Server) getTransfer(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	t, tip, err := s.store.TransferView(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && !key.Sees(t.Store)) {
		// Another store's transfer is as unknown as one that never was.
		writeError(w, http.StatusNotFound, "not_found", "no transfer "+strconv.Quote(r.PathValue("id")))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, 200, views.TransferOf(t, tip))
}

// resolveTransfer records a finance decision; the actor is the API key's name.
func (s *Server) resolveTransfer(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	var req finance.ResolveRequest
	claim, ok := s.decodeClaim(w, r, key, &req)
	if !ok {
		return
	}
	req.Store = key.Store // another store's transfer is not found
	res, err := s.finance.Resolve(r.Context(), r.PathValue("id"), req, key.Name, claim)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeResult(w, res)
}

// reconciliation serves the report as JSON (rows and totals) or CSV (one
// row per transfer), as of ?as_of= (default: now; a closed period without
// as_of is served as stored when it was closed). It is the books of the
// key's store.
func (s *Server) reconciliation(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	q := r.URL.Query()
	from, to, ok := reportPeriod(w, q.Get("from"), q.Get("to"))
	if !ok {
		return
	}
	var asOf time.Time
	if v := q.Get("as_of"); v != "" {
		t, err := reports.ParseReportTime(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", "as_of: "+err.Error())
			return
		}
		asOf = t
	}
	format := q.Get("format")
	if format == "" {
		format = reports.FormatJSON
	}
	body, closed, err := s.reports.RenderReconciliation(r.Context(), shop, from, to, asOf, format)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if closed != nil {
		w.Header().Set("Paywatch-Report-Closed", closed.ID)
	}
	if format == reports.FormatJSON {
		writeRaw(w, 200, body)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="reconciliation-`+from.Format("20060102")+`-`+to.Format("20060102")+`.csv"`)
	w.WriteHeader(200)
	_, _ = w.Write(body)
}

// reportPeriod parses a report's from and to; false means an error was
// written.
func reportPeriod(w http.ResponseWriter, fromS, toS string) (time.Time, time.Time, bool) {
	from, err := reports.ParseReportTime(fromS)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "from: "+err.Error())
		return time.Time{}, time.Time{}, false
	}
	to, err := reports.ParseReportTime(toS)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "to: "+err.Error())
		return time.Time{}, time.Time{}, false
	}
	return from, to, true
}

// closePeriod closes a reporting period: 201 the close, or 200 the
// existing close of the same period. It closes the books of the key's
// store.
func (s *Server) closePeriod(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	var req struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	if _, ok := s.decode(w, r, &req, false); !ok {
		return
	}
	from, to, ok := reportPeriod(w, req.From, req.To)
	if !ok {
		return
	}
	c, created, err := s.reports.ClosePeriod(r.Context(), shop, from, to, key.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, c)
}

// listCloses lists the closes of the key's store.
func (s *Server) listCloses(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	cs, err := s.reports.ReportCloses(r.Context(), shop)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, 200, map[string]any{"closes": cs})
}

// WebhookEndpointView is one endpoint's delivery state.
type WebhookEndpointView struct {
	Name          string     `json:"name"`
	URL           string     `json:"url"`
	LastSeq       int64      `json:"last_seq"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	FirstFailedAt *time.Time `json:"first_failed_at"`
	LastError     string     `json:"last_error"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// DeliveryView is one line of the webhook delivery log.
type DeliveryView struct {
	ID         int64     `json:"id"`
	Endpoint   string    `json:"endpoint"`
	EventSeq   int64     `json:"event_seq"`
	EventID    string    `json:"event_id"`
	StatusCode *int      `json:"status_code"`
	Error      string    `json:"error"`
	DurationMS int       `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	Attempt    int       `json:"attempt"`
	CreatedAt  time.Time `json:"created_at"`
}

// listWebhooks lists the endpoints: a store's key sees the ones that hear
// its store only (an every-store endpoint is the operator's).
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	eps, err := s.store.WebhookEndpointsOf(r.Context(), key.Store)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := []WebhookEndpointView{}
	for _, e := range eps {
		// Redacted again: rows stored before the sender redacted them may
		// hold an endpoint's credentials.
		out = append(out, WebhookEndpointView{Name: e.Name, URL: webhooks.RedactURL(e.URL), LastSeq: e.LastSeq, Attempts: e.Attempts,
			NextAttemptAt: e.NextAttemptAt, FirstFailedAt: e.FirstFailedAt, LastError: webhooks.RedactText(e.LastError), UpdatedAt: e.UpdatedAt})
	}
	writeJSON(w, 200, map[string]any{"endpoints": out})
}

// webhookDeliveries serves the delivery log, newest first; ?before= pages.
func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	limit, ok := limitParam(w, r, 100, 1000)
	if !ok {
		return
	}
	var before int64
	if v := r.URL.Query().Get("before"); v != "" {
		n, ok := parseCount(v)
		if !ok || n < 1 {
			writeError(w, http.StatusBadRequest, "invalid_request", "before must be a delivery id")
			return
		}
		before = n
	}
	as, err := s.store.WebhookAttemptsOf(r.Context(), key.Store, r.URL.Query().Get("endpoint"), before, limit)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := struct {
		Deliveries []DeliveryView `json:"deliveries"`
		Next       *int64         `json:"next"`
	}{Deliveries: []DeliveryView{}}
	for _, a := range as {
		a.Error = webhooks.RedactText(a.Error)
		out.Deliveries = append(out.Deliveries, DeliveryView(a))
	}
	if len(as) == limit {
		out.Next = &as[len(as)-1].ID
	}
	writeJSON(w, 200, out)
}
