package api

import (
	"net/http"
	"strconv"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/store"
)

// moneyRoutes mounts balances, debits, the event feed, the finance inbox,
// reports and the webhook delivery log.
func (s *Server) moneyRoutes() {
	s.Handle("GET /v1/accounts/{account}/balance", ScopeRead, s.getBalance)
	s.Handle("GET /v1/accounts/{account}/ledger", ScopeRead, s.getLedger)
	s.Handle("POST /v1/accounts/{account}/debits", ScopeDebit, s.postDebit)
	s.Handle("GET /v1/events", ScopeRead, s.getEvents)
	s.Handle("GET /v1/transfers", ScopeFinance, s.listTransfers)
	s.Handle("GET /v1/transfers/{id}", ScopeFinance, s.getTransfer)
	s.Handle("POST /v1/transfers/{id}/resolve", ScopeFinance, s.resolveTransfer)
	s.Handle("GET /v1/reports/reconciliation", ScopeFinance, s.reconciliation)
	s.Handle("POST /v1/reports/closes", ScopeFinance, s.closePeriod)
	s.Handle("GET /v1/reports/closes", ScopeFinance, s.listCloses)
	s.Handle("GET /v1/webhooks", ScopeOperator, s.listWebhooks)
	s.Handle("GET /v1/webhooks/deliveries", ScopeOperator, s.webhookDeliveries)
}

// limitParam parses ?limit= (default def, at most max); false means an
// error was written.
func limitParam(w http.ResponseWriter, r *http.Request, def, max int) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	n, ok := parseCount(v)
	if !ok || n < 1 || n > int64(max) {
		writeError(w, http.StatusBadRequest, "invalid_request", "limit must be between 1 and "+strconv.Itoa(max))
		return 0, false
	}
	return int(n), true
}

func (s *Server) getBalance(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	if !forbidAccount(w, key, r.PathValue("account")) {
		return
	}
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	v, err := s.finance.Balance(r.Context(), shop, r.PathValue("account"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, 200, v)
}

func (s *Server) getLedger(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	if !forbidAccount(w, key, r.PathValue("account")) {
		return
	}
	limit, ok := limitParam(w, r, 100, 1000)
	if !ok {
		return
	}
	after, err := queryID(r, "after", "le")
	if err != nil {
		writeEdge(w, err)
		return
	}
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	page, err := s.finance.Ledger(r.Context(), shop, r.PathValue("account"), after, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, 200, page)
}

func (s *Server) postDebit(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	if !forbidAccount(w, key, r.PathValue("account")) {
		return
	}
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	var req finance.DebitRequest
	claim, ok := s.decodeClaim(w, r, key, &req)
	if !ok {
		return
	}
	res, err := s.finance.Debit(r.Context(), shop, r.PathValue("account"), req, claim)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeResult(w, res)
}
